"""``Session``: one conversation of one user in one app, with its merged state and events."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, alias_generators

from ..events import Event

__all__ = ["Session"]


class Session(BaseModel):
    """Mirror of ADK's ``Session``.

    ``state`` holds the session's own keys plus ``app:`` and ``user:`` keys merged in on read;
    ``last_update_time`` is the storage revision used to detect stale copies.
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
