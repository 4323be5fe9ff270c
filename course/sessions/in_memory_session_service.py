"""``InMemorySessionService``: the same API and rules as the SQLite service, kept in memory.

For tests and demonstrations. State is stored as JSON text, exactly as in the file, so both
backends accept and return the same things; returned sessions are copies, never storage.
"""

from __future__ import annotations

import bisect
import itertools
import json
import time
from typing import Any

from ..events import Event
from .base_session_service import (
    BaseSessionService,
    GetSessionConfig,
    ListSessionsResponse,
    check_name,
    next_update_time,
)
from .errors import AlreadyExistsError, DuplicateEventError, SessionNotFoundError, StaleSessionError
from .session import Session
from .state import dumps_state, merge_state, split_state

__all__ = ["InMemorySessionService"]


class _StoredSession:
    """One stored session: its own state (JSON text), times and events sorted by time."""

    __slots__ = ("state_json", "create_time", "update_time", "events", "event_ids")

    def __init__(self, state_json: str, now: float) -> None:
        self.state_json = state_json
        self.create_time = now
        self.update_time = now
        self.events: list[tuple[float, int, str]] = []  # (timestamp, arrival, event JSON)
        self.event_ids: set[str] = set()


class InMemorySessionService(BaseSessionService):
    """Les sessions en mémoire, perdues à la fin du processus\u00a0: pour les tests et les démos."""

    def __init__(self) -> None:
        self._sessions: dict[tuple[str, str, str], _StoredSession] = {}
        self._user_states: dict[tuple[str, str], str] = {}
        self._app_states: dict[str, str] = {}
        self._arrivals = itertools.count()

    def __repr__(self) -> str:
        return f"InMemorySessionService({len(self._sessions)} sessions)"

    def _merged(self, app_name: str, user_id: str, stored: _StoredSession) -> dict[str, Any]:
        return merge_state(
            json.loads(self._app_states.get(app_name, "{}")),
            json.loads(self._user_states.get((app_name, user_id), "{}")),
            json.loads(stored.state_json),
        )

    def _upsert(self, table: dict, key: Any, delta: dict[str, Any]) -> None:
        if delta:
            state = json.loads(table.get(key, "{}"))
            state.update(delta)
            table[key] = dumps_state(state)

    async def create_session(
        self,
        *,
        app_name: str,
        user_id: str,
        state: dict[str, Any] | None = None,
        session_id: str | None = None,
    ) -> Session:
        check_name(app_name, "app_name")
        check_name(user_id, "user_id")
        session_id = self._new_session_id(session_id)
        app_delta, user_delta, own = self._split_initial_state(state)
        key = (app_name, user_id, session_id)
        if key in self._sessions:
            raise AlreadyExistsError(f"La session {session_id!r} existe déjà.")
        now = time.time()
        self._upsert(self._app_states, app_name, app_delta)
        self._upsert(self._user_states, (app_name, user_id), user_delta)
        stored = self._sessions[key] = _StoredSession(dumps_state(own), now)
        return Session(
            id=session_id,
            app_name=app_name,
            user_id=user_id,
            state=self._merged(app_name, user_id, stored),
            last_update_time=now,
        )

    async def get_session(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str,
        config: GetSessionConfig | None = None,
    ) -> Session | None:
        await self._hand_back()  # a loop of reads: Stop still felt
        self._check_ids(app_name, user_id, session_id)
        stored = self._sessions.get((app_name, user_id, session_id))
        if stored is None:
            return None
        rows = stored.events
        if config is not None and config.after_timestamp:
            start = bisect.bisect_left(rows, (config.after_timestamp,))
            rows = rows[start:]
        if config is not None and config.num_recent_events is not None:
            # the last n, or all of them when there are fewer (never a negative start)
            rows = rows[max(0, len(rows) - config.num_recent_events) :]
        return Session(
            id=session_id,
            app_name=app_name,
            user_id=user_id,
            state=self._merged(app_name, user_id, stored),
            events=[Event.model_validate_json(data) for _, _, data in rows],
            last_update_time=stored.update_time,
        )

    async def list_sessions(
        self, *, app_name: str, user_id: str | None = None
    ) -> ListSessionsResponse:
        await self._hand_back()  # a loop of reads: Stop still felt
        check_name(app_name, "app_name")
        if user_id is not None:
            check_name(user_id, "user_id")
        found = [
            Session(
                id=sid,
                app_name=app,
                user_id=uid,
                state=self._merged(app, uid, stored),
                last_update_time=stored.update_time,
            )
            for (app, uid, sid), stored in self._sessions.items()
            if app == app_name and (user_id is None or uid == user_id)
        ]
        found.sort(key=lambda s: (s.last_update_time, s.user_id, s.id))
        return ListSessionsResponse(sessions=found)

    async def delete_session(self, *, app_name: str, user_id: str, session_id: str) -> None:
        self._check_ids(app_name, user_id, session_id)
        self._sessions.pop((app_name, user_id, session_id), None)

    async def get_user_state(self, *, app_name: str, user_id: str) -> dict[str, Any]:
        await self._hand_back()  # a loop of reads: Stop still felt
        self._check_ids(app_name, user_id)
        return json.loads(self._user_states.get((app_name, user_id), "{}"))

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
        await self._hand_back()  # a loop of reads: Stop still felt
        self._check_ids(app_name, user_id, session_id)
        self._check_page(after, limit, offset)
        stored = self._sessions.get((app_name, user_id, session_id))
        if stored is None:
            raise SessionNotFoundError(f"Session {session_id!r} introuvable.")
        start = after + offset
        rows = stored.events[start : start + limit]
        return [Event.model_validate_json(data) for _, _, data in rows]

    async def _store_event(self, session: Session, event: Event, event_json: str) -> float:
        key = (session.app_name, session.user_id, session.id)
        stored = self._sessions.get(key)
        if stored is None:
            raise SessionNotFoundError(f"Session {session.id!r} introuvable.")
        if stored.update_time > session.last_update_time:
            raise StaleSessionError(
                "Cette session a été modifiée ailleurs depuis sa lecture (last_update_time "
                "plus ancien que celui enregistré)\u00a0: relisez-la avec get_session."
            )
        if event.id in stored.event_ids:
            raise DuplicateEventError(
                f"L'événement {event.id!r} est déjà enregistré dans cette session."
            )
        app_delta, user_delta, own_delta = split_state(event.actions.state_delta)
        self._upsert(self._app_states, session.app_name, app_delta)
        self._upsert(self._user_states, (session.app_name, session.user_id), user_delta)
        if own_delta:
            own = json.loads(stored.state_json)
            own.update(own_delta)
            stored.state_json = dumps_state(own)
        bisect.insort(stored.events, (event.timestamp, next(self._arrivals), event_json))
        stored.event_ids.add(event.id)
        stored.update_time = next_update_time(event.timestamp, stored.update_time)
        return stored.update_time
