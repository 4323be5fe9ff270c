"""``Session``: one conversation of one user in one app, with its merged state and events."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, alias_generators

from ..events import Event

__all__ = ["Session"]


class Session(BaseModel):
    """Une conversation d'un utilisateur dans une application (comme ``Session`` d'ADK).

    ``state`` contient les clés de la session, plus les clés ``app:`` et ``user:`` fusionnées
    à la lecture\u00a0; ``last_update_time`` sert à repérer une copie périmée.
    """

    model_config = ConfigDict(
        extra="forbid",
        arbitrary_types_allowed=True,
        alias_generator=alias_generators.to_camel,
        populate_by_name=True,
    )

    id: str
    app_name: str
    user_id: str
    state: dict[str, Any] = Field(default_factory=dict)
    events: list[Event] = Field(default_factory=list)
    last_update_time: float = 0.0
