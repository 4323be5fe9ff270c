"""The SQL work of ``SqliteSessionService``, as plain functions on a ``sqlite3.Connection``.

Each function runs whole in one thread (the connection's own for writes, see
``_connection_thread``; the event loop's for a read on an idle connection), inside one
transaction: writes take the write lock first (``BEGIN IMMEDIATE``), so the staleness check
and the write see the same database and two racing writers cannot both succeed.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable
from typing import Any, TypeVar

from .base_session_service import next_update_time
from .errors import (
    AlreadyExistsError,
    DatabaseBusyError,
    DuplicateEventError,
    InvalidDatabaseError,
    SessionNotFoundError,
    StaleSessionError,
)
from .state import dumps_state

__all__ = [
    "append_event",
    "create_session",
    "delete_session",
    "get_session",
    "get_user_state",
    "is_busy",
    "list_events",
    "list_sessions",
    "loads_state",
    "read",
    "run_alone",
    "scoped_states",
    "write",
]

T = TypeVar("T")

BEGIN_ATTEMPTS = 4  # each attempt already waits busy_timeout inside SQLite


def is_busy(exc: sqlite3.OperationalError) -> bool:
    return "locked" in str(exc) or "busy" in str(exc)


def write(db: sqlite3.Connection, work: Callable[..., T], *args: Any) -> T:
    """Run ``work(db, *args)`` in a write transaction; roll back on any error."""
    for attempt in range(BEGIN_ATTEMPTS):
        try:
            db.execute("BEGIN IMMEDIATE")
            break
        except sqlite3.OperationalError as exc:
            if not is_busy(exc):
                raise
            if attempt == BEGIN_ATTEMPTS - 1:
                raise DatabaseBusyError(
                    "La base est verrouillée en écriture par un autre programme depuis trop "
                    "longtemps\u00a0; réessayez plus tard. Rien n'a été écrit."
                ) from exc
            time.sleep(0.05 * (attempt + 1))
    try:
        result = work(db, *args)
        db.execute("COMMIT")
        return result
    except BaseException:
        if db.in_transaction:
            db.execute("ROLLBACK")
        raise


def read(db: sqlite3.Connection, work: Callable[..., T], *args: Any) -> T:
    """Run ``work(db, *args)`` in one read transaction: a consistent snapshot."""
    db.execute("BEGIN")
    try:
        return work(db, *args)
    finally:
        if db.in_transaction:
            db.execute("COMMIT")


def run_alone(db: sqlite3.Connection, work: Callable[..., T], *args: Any) -> T:
    """Run ``work(db, *args)`` that is a single statement: SQLite reads it in one snapshot
    by itself, without the two extra statements of an explicit transaction."""
    return work(db, *args)


def loads_state(text: str, where: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except (TypeError, ValueError) as exc:
        raise InvalidDatabaseError(f"État illisible dans la table {where}\u00a0: {exc}.") from None
    if not isinstance(value, dict):
        raise InvalidDatabaseError(f"État de la table {where}\u00a0: un objet JSON était attendu.")
    return value


def _app_state(db: sqlite3.Connection, app_name: str) -> dict[str, Any]:
    row = db.execute("SELECT state FROM app_states WHERE app_name=?", (app_name,)).fetchone()
    return loads_state(row[0], "app_states") if row else {}


def _user_state(db: sqlite3.Connection, app_name: str, user_id: str) -> dict[str, Any]:
    row = db.execute(
        "SELECT state FROM user_states WHERE app_name=? AND user_id=?", (app_name, user_id)
    ).fetchone()
    return loads_state(row[0], "user_states") if row else {}


def _upsert_app(db: sqlite3.Connection, app_name: str, delta: dict, now: float) -> None:
    state = _app_state(db, app_name)
    state.update(delta)
    db.execute(
        "INSERT INTO app_states (app_name, state, update_time) VALUES (?, ?, ?) "
        "ON CONFLICT(app_name) DO UPDATE SET state=excluded.state, "
        "update_time=excluded.update_time",
        (app_name, dumps_state(state), now),
    )


def _upsert_user(db: sqlite3.Connection, app_name: str, user_id: str, delta: dict, now: float):
    state = _user_state(db, app_name, user_id)
    state.update(delta)
    db.execute(
        "INSERT INTO user_states (app_name, user_id, state, update_time) VALUES (?, ?, ?, ?) "
        "ON CONFLICT(app_name, user_id) DO UPDATE SET state=excluded.state, "
        "update_time=excluded.update_time",
        (app_name, user_id, dumps_state(state), now),
    )


def create_session(
    db: sqlite3.Connection,
    app_name: str,
    user_id: str,
    session_id: str,
    deltas: tuple[dict, dict, dict],
    now: float,
) -> tuple[dict, dict, dict]:
    """Insert the session and its scoped state; return (app, user, session) states."""
    app_delta, user_delta, own = deltas
    exists = db.execute(
        "SELECT 1 FROM sessions WHERE app_name=? AND user_id=? AND id=?",
        (app_name, user_id, session_id),
    ).fetchone()
    if exists:
        raise AlreadyExistsError(f"La session {session_id!r} existe déjà.")
    if app_delta:
        _upsert_app(db, app_name, app_delta, now)
    if user_delta:
        _upsert_user(db, app_name, user_id, user_delta, now)
    db.execute(
        "INSERT INTO sessions (app_name, user_id, id, state, create_time, update_time) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        (app_name, user_id, session_id, dumps_state(own), now, now),
    )
    return _app_state(db, app_name), _user_state(db, app_name, user_id), own


# The app and user states in the same statement as what they go with: one consistent read.
_SCOPED_STATES = (
    "(SELECT state FROM app_states WHERE app_name=:app), "
    "(SELECT state FROM user_states WHERE app_name=:app AND user_id=:user)"
)
_SESSION_SQL = (
    f"SELECT state, update_time, {_SCOPED_STATES} FROM sessions "
    "WHERE app_name=:app AND user_id=:user AND id=:id"
)


def scoped_states(app_json: str | None, user_json: str | None) -> tuple[dict, dict]:
    """Parsed app and user states; a missing row (NULL) is an empty state."""
    app_state = {} if app_json is None else loads_state(app_json, "app_states")
    return app_state, {} if user_json is None else loads_state(user_json, "user_states")


def get_session(
    db: sqlite3.Connection,
    app_name: str,
    user_id: str,
    session_id: str,
    num_recent: int | None,
    after_timestamp: float | None,
) -> tuple[dict, dict, dict, float, list[str]] | None:
    """Raw parts of a session: app, user, own state, update time, events JSON in time order."""
    row = db.execute(_SESSION_SQL, {"app": app_name, "user": user_id, "id": session_id}).fetchone()
    if row is None:
        return None
    events: list[str] = []
    if num_recent != 0:
        sql = "SELECT event_data FROM events WHERE app_name=? AND user_id=? AND session_id=?"
        params: list[Any] = [app_name, user_id, session_id]
        if after_timestamp:
            sql += " AND timestamp >= ?"
            params.append(after_timestamp)
        if num_recent is None:
            sql += " ORDER BY timestamp, rowid"
            events = [r[0] for r in db.execute(sql, params)]
        else:
            sql += " ORDER BY timestamp DESC, rowid DESC LIMIT ?"
            params.append(num_recent)
            events = [r[0] for r in db.execute(sql, params)]
            events.reverse()
    app_state, user_state = scoped_states(row[2], row[3])
    return app_state, user_state, loads_state(row[0], "sessions"), row[1], events


# Listing is ONE statement (one snapshot without BEGIN/COMMIT): a head row holding the app
# state and the user state(s), whose NULL sort key puts it first, then the sessions in order,
# read already sorted from a covering index (no table lookup, no sort step).
_USER_LISTING_SQL = (
    f"SELECT NULL, {_SCOPED_STATES} UNION ALL "
    "SELECT update_time, id, state FROM sessions WHERE app_name=:app AND user_id=:user "
    "ORDER BY 1, 2"
)
_APP_LISTING_SQL = (
    "SELECT NULL, NULL, (SELECT state FROM app_states WHERE app_name=:app), "
    "(SELECT json_group_object(user_id, state) FROM user_states WHERE app_name=:app) "
    "UNION ALL "
    "SELECT update_time, user_id, id, state FROM sessions WHERE app_name=:app "
    "ORDER BY 1, 2, 3"
)


def list_sessions(db: sqlite3.Connection, app_name: str, user_id: str | None) -> list[tuple]:
    """The head row, then one row per session, oldest update first. Never touches events.

    One user: head ``(None, app state JSON, user state JSON)``, then ``(update_time, id,
    state JSON)``. Every user: head ``(None, None, app state JSON, {user_id: user state JSON}
    as JSON)``, then ``(update_time, user_id, id, state JSON)``. A missing app or user state
    is None. States stay JSON text: the caller parses them all in one call.
    """
    if user_id is None:
        return db.execute(_APP_LISTING_SQL, {"app": app_name}).fetchall()
    return db.execute(_USER_LISTING_SQL, {"app": app_name, "user": user_id}).fetchall()


def delete_session(db: sqlite3.Connection, app_name: str, user_id: str, session_id: str) -> None:
    """Delete one session; its events go by the foreign key's cascade."""
    db.execute(
        "DELETE FROM sessions WHERE app_name=? AND user_id=? AND id=?",
        (app_name, user_id, session_id),
    )


def get_user_state(db: sqlite3.Connection, app_name: str, user_id: str) -> dict[str, Any]:
    return _user_state(db, app_name, user_id)


def list_events(
    db: sqlite3.Connection,
    app_name: str,
    user_id: str,
    session_id: str,
    skip: int,
    limit: int,
) -> list[str] | None:
    """Events JSON at positions skip+1 .. skip+limit in time order; None if no such session."""
    exists = db.execute(
        "SELECT 1 FROM sessions WHERE app_name=? AND user_id=? AND id=?",
        (app_name, user_id, session_id),
    ).fetchone()
    if exists is None:
        return None
    return [
        r[0]
        for r in db.execute(
            "SELECT event_data FROM events WHERE app_name=? AND user_id=? AND session_id=? "
            "ORDER BY timestamp, rowid LIMIT ? OFFSET ?",
            (app_name, user_id, session_id, limit, skip),
        )
    ]


def append_event(
    db: sqlite3.Connection,
    app_name: str,
    user_id: str,
    session_id: str,
    seen_update_time: float,
    event_id: str,
    invocation_id: str,
    timestamp: float,
    event_json: str,
    deltas: tuple[dict, dict, dict],
) -> float:
    """Check staleness, store the event and its state delta; return the new update time."""
    row = db.execute(
        "SELECT update_time, state FROM sessions WHERE app_name=? AND user_id=? AND id=?",
        (app_name, user_id, session_id),
    ).fetchone()
    if row is None:
        raise SessionNotFoundError(f"Session {session_id!r} introuvable.")
    storage_time, own_json = row
    if storage_time > seen_update_time:
        raise StaleSessionError(
            "Cette session a été modifiée ailleurs depuis sa lecture (last_update_time plus "
            "ancien que celui enregistré)\u00a0: relisez-la avec get_session. Rien n'a été écrit."
        )
    app_delta, user_delta, own_delta = deltas
    if app_delta:
        _upsert_app(db, app_name, app_delta, timestamp)
    if user_delta:
        _upsert_user(db, app_name, user_id, user_delta, timestamp)
    try:
        db.execute(
            "INSERT INTO events (id, app_name, user_id, session_id, invocation_id, timestamp, "
            "event_data) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (event_id, app_name, user_id, session_id, invocation_id, timestamp, event_json),
        )
    except sqlite3.IntegrityError as exc:
        raise DuplicateEventError(
            f"L'événement {event_id!r} est déjà enregistré dans cette session ({exc})."
        ) from None
    new_time = next_update_time(timestamp, storage_time)
    if own_delta:
        own = loads_state(own_json, "sessions")
        own.update(own_delta)
        db.execute(
            "UPDATE sessions SET state=?, update_time=? WHERE app_name=? AND user_id=? AND id=?",
            (dumps_state(own), new_time, app_name, user_id, session_id),
        )
    else:
        db.execute(
            "UPDATE sessions SET update_time=? WHERE app_name=? AND user_id=? AND id=?",
            (new_time, app_name, user_id, session_id),
        )
    return new_time
