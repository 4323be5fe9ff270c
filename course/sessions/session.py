"""``Session``: one conversation of one user in one app, with its merged state and events."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, alias_generators

from ..events import Event

__all__ = ["Session"]


class Session(BaseModel):
    """Une conversation d'un utilisateur dans une application (comme ``Session`` d'ADK).

    ``state`` contient les clés de la session, plus les clés ``app:`` et ``user:`` fusionnées
    à la lecture ; ``last_update_time`` sert à repérer une copie périmée.
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


_FIELDS_SET = set(Session.model_fields)
_new = Session.__new__


def stored_session(
    *,
    id: str,
    app_name: str,
    user_id: str,
    state: dict[str, Any],
    events: list[Event],
    last_update_time: float,
) -> Session:
    """A Session from data the service itself read from storage, without re-validating it.

    Listing 10,000 sessions spends most of its time validating values that storage already
    guarantees (str ids, float times, dict states); this builds the same object as
    ``model_construct`` at a fraction of its cost.
    """
    session = _new(Session)
    setattr_ = object.__setattr__
    setattr_(
        session,
        "__dict__",
        {
            "id": id,
            "app_name": app_name,
            "user_id": user_id,
            "state": state,
            "events": events,
            "last_update_time": last_update_time,
        },
    )
    # Every field is set, so one shared set is exact; pydantic only ever adds field names to it.
    setattr_(session, "__pydantic_fields_set__", _FIELDS_SET)
    setattr_(session, "__pydantic_extra__", None)
    setattr_(session, "__pydantic_private__", None)
    return session
