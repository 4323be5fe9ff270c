"""``BaseSessionService`` and its two small models, with ADK 2.10's API.

Every method is async with keyword-only arguments, as in ADK. The shared logic of
``append_event`` (partial events, ``temp:`` keys, argument checks) lives here; a backend only
stores.
"""

from __future__ import annotations

import abc
import math
from typing import Any

from pydantic import BaseModel, Field, field_validator

from ..events import Event
from .errors import InvalidArgumentError
from .session import Session
from .state import State, dumps_state, split_state

__all__ = ["BaseSessionService", "GetSessionConfig", "ListSessionsResponse"]


class GetSessionConfig(BaseModel):
    """Which events ``get_session`` returns.

    ``num_recent_events``: None for all, n > 0 for the last n, 0 for none (negative refused);
    ``after_timestamp``: keep events whose timestamp is >= it.
    """

    num_recent_events: int | None = None
    after_timestamp: float | None = None

    @field_validator("num_recent_events")
    @classmethod
    def _not_negative(cls, value: int | None) -> int | None:
        if value is not None and value < 0:
            raise ValueError("num_recent_events doit être supérieur ou égal à 0.")
        return value


class ListSessionsResponse(BaseModel):
    """The sessions found, oldest update first, each without its events."""

    sessions: list[Session] = Field(default_factory=list)


def check_name(value: Any, what: str) -> str:
    """A non-empty string, or a clear French error (an empty user_id must never mean 'all')."""
    if not isinstance(value, str):
        raise InvalidArgumentError(
            f"{what} doit être une chaîne de caractères (str), pas {type(value).__name__} "
            f"({value!r})."
        )
    if not value.strip():
        raise InvalidArgumentError(f"{what} ne doit pas être vide.")
    return value


def next_update_time(event_timestamp: float, storage_time: float) -> float:
    """The session's new revision time: the event's time, but always after the stored one.

    ADK copies the event's timestamp, so an event built earlier moves it backwards and a
    racing writer can slip through the staleness check; here it only moves forward.
    """
    if event_timestamp > storage_time:
        return event_timestamp
    return math.nextafter(storage_time, math.inf)


class BaseSessionService(abc.ABC):
    """Creates, reads, lists and deletes sessions and appends events to them."""

    @abc.abstractmethod
    async def create_session(
        self,
        *,
        app_name: str,
        user_id: str,
        state: dict[str, Any] | None = None,
        session_id: str | None = None,
    ) -> Session:
        """Create a session; ``session_id`` is stripped, a uuid4 when empty."""

    @abc.abstractmethod
    async def get_session(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str,
        config: GetSessionConfig | None = None,
    ) -> Session | None:
        """The full session (merged state, events in time order), or None if missing."""

    @abc.abstractmethod
    async def list_sessions(
        self, *, app_name: str, user_id: str | None = None
    ) -> ListSessionsResponse:
        """Sessions oldest update first, state merged, ``events=[]``; all users if None."""

    @abc.abstractmethod
    async def delete_session(self, *, app_name: str, user_id: str, session_id: str) -> None:
        """Delete a session and its events; user and app state stay. Missing: no error."""

    @abc.abstractmethod
    async def get_user_state(self, *, app_name: str, user_id: str) -> dict[str, Any]:
        """The user's ``user:`` state, keys without prefix; ``{}`` when none."""

    @abc.abstractmethod
    async def list_events(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str,
        after: int = 0,
        limit: int = 100,
        offset: int = 0,
    ) -> list[Event]:
        """A page of a session's events in time order: positions > ``after`` (1-based),
        skipping ``offset`` more, at most ``limit``."""

    @abc.abstractmethod
    async def _store_event(self, session: Session, event: Event, event_json: str) -> float:
        """Store one event atomically (staleness check included); return the new update time."""

    async def append_event(self, session: Session, event: Event) -> Event:
        """Append an event: store it with its state delta, then update ``session`` in memory.

        Partial events are returned and not stored; ``temp:`` keys reach ``session.state``
        only. Raises SessionNotFoundError, StaleSessionError or DuplicateEventError, and then
        nothing is written.
        """
        if not isinstance(session, Session):
            raise InvalidArgumentError(
                f"session doit être une Session de course.sessions, pas {type(session).__name__}."
            )
        if not isinstance(event, Event):
            event = _as_course_event(event)
        if event.partial:
            return event
        delta = event.actions.state_delta or {}
        kept = {k: v for k, v in delta.items() if not k.startswith(State.TEMP_PREFIX)}
        dumps_state(kept, "Le state_delta de l'événement")
        if delta:
            event.actions.state_delta = kept
        try:
            event_json = event.model_dump_json(exclude_none=True)
        except Exception as exc:
            event.actions.state_delta = delta
            raise InvalidArgumentError(
                f"L'événement ne peut pas s'écrire en JSON : {exc}. Rien n'a été enregistré."
            ) from None
        for key, value in delta.items():
            if key.startswith(State.TEMP_PREFIX):
                session.state[key] = value
        session.last_update_time = await self._store_event(session, event, event_json)
        self._update_session_state(session, event)
        session.events.append(event)
        return event

    async def flush(self) -> None:
        """Nothing is buffered: every append is committed before it returns (ADK's API)."""
        return None

    async def close(self) -> None:
        """Release resources; the in-memory service has none."""
        return None

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    def _apply_temp_state(self, session: Session, event: Event) -> None:
        for key, value in (event.actions.state_delta or {}).items():
            if key.startswith(State.TEMP_PREFIX):
                session.state[key] = value

    def _trim_temp_delta_state(self, event: Event) -> Event:
        if event.actions.state_delta:
            event.actions.state_delta = {
                k: v
                for k, v in event.actions.state_delta.items()
                if not k.startswith(State.TEMP_PREFIX)
            }
        return event

    def _update_session_state(self, session: Session, event: Event) -> None:
        if event.actions.state_delta:
            session.state.update(event.actions.state_delta)

    @staticmethod
    def _check_ids(app_name: Any, user_id: Any, session_id: Any = "-") -> None:
        check_name(app_name, "app_name")
        check_name(user_id, "user_id")
        check_name(session_id, "session_id")

    @staticmethod
    def _new_session_id(session_id: Any) -> str:
        import uuid

        if session_id is None:
            return str(uuid.uuid4())
        if not isinstance(session_id, str):
            raise InvalidArgumentError(
                "session_id doit être une chaîne de caractères (str) ou None, pas "
                f"{type(session_id).__name__} ({session_id!r})."
            )
        return session_id.strip() or str(uuid.uuid4())

    @staticmethod
    def _check_page(after: Any, limit: Any, offset: Any) -> None:
        for name, value in (("after", after), ("limit", limit), ("offset", offset)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise InvalidArgumentError(
                    f"{name} doit être un entier positif ou nul, pas {value!r}."
                )

    @staticmethod
    def _split_initial_state(state: Any) -> tuple[dict, dict, dict]:
        if state is None:
            return {}, {}, {}
        dumps_state(state, "L'état initial (state)")
        return split_state(state)


def _as_course_event(event: Any) -> Event:
    """Accept an event of another pydantic class (e.g. ADK's) by its JSON; else a clear error."""
    dump = getattr(event, "model_dump_json", None)
    if dump is None:
        raise InvalidArgumentError(
            f"event doit être un Event de course.events, pas {type(event).__name__}."
        )
    return Event.model_validate_json(dump(exclude_none=True))
