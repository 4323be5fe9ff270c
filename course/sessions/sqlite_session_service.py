"""``SqliteSessionService``: sessions in a SQLite file in ADK 2.10's format, on aiosqlite.

Unlike ADK's service, it keeps ONE connection open (until ``close()`` or the end of an
``async with`` block), runs in WAL mode with a busy timeout, has an index for a session's events
in time order, and checks staleness inside the write transaction. Writes run in aiosqlite's
thread; reads on an idle connection run in place, without a thread hop (see ``_run``). Files
stay interchangeable with ADK's ``SqliteSessionService``.
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import aiosqlite
from pydantic import TypeAdapter

from .. import dbfile
from ..events import Event
from . import _sqlite_ops as ops
from ._schema import CREATE_SCHEMA_SQL, INDEX_COLUMNS
from .base_session_service import (
    BaseSessionService,
    GetSessionConfig,
    ListSessionsResponse,
    check_name,
    stored_listing,
)
from .errors import (
    InvalidArgumentError,
    InvalidDatabaseError,
    ReadOnlyDatabaseError,
    ServiceClosedError,
    SessionNotFoundError,
)
from .session import Session, stored_session, stored_sessions
from .state import State, merge_state, prefixed, split_state

__all__ = ["SqliteSessionService"]

BUSY_TIMEOUT_MS = 5_000
EVENT_LIST = TypeAdapter(list[Event])


def _parse_events(rows: list[str]) -> list[Event]:
    """Events from their stored JSON in one validation call (much cheaper than one per row)."""
    return EVENT_LIST.validate_json("[" + ",".join(rows) + "]") if rows else []


def _events_from(rows: list[str] | None) -> list[Event] | None:
    """The events that ``ops.list_events`` found (None: no such session)."""
    return None if rows is None else _parse_events(rows)


def _parse_states(texts: Sequence[str], *scoped: tuple[str | None, str]) -> list[dict[str, Any]]:
    """States from their stored JSON in one json.loads call: first each ``(JSON or None,
    table)`` of ``scoped`` (None: no row, an empty state), then the sessions' ``texts``.
    A bad row gets the clear error of ``ops.loads_state``, naming its table."""
    heads = ["{}" if text is None else text for text, _ in scoped]
    try:
        states = json.loads("[" + ",".join([*heads, *texts]) + "]")
    except (TypeError, ValueError):
        states = None
    if states is None or len(states) != len(heads) + len(texts) or set(map(type, states)) - {dict}:
        states = [
            ops.loads_state(text, table) for text, (_, table) in zip(heads, scoped, strict=True)
        ]
        states += [ops.loads_state(text, "sessions") for text in texts]
    return states


def _session_from(app_name: str, user_id: str, session_id: str, found: tuple | None):
    """The Session that ``ops.get_session`` found (or None)."""
    if found is None:
        return None
    app_state, user_state, own, update_time, events = found
    return stored_session(
        session_id,
        app_name,
        user_id,
        merge_state(app_state, user_state, own),
        _parse_events(events),
        update_time,
    )


def _user_listing(app_name: str, user_id: str, rows: list[tuple]) -> ListSessionsResponse:
    """The sessions of one user that ``ops.list_sessions`` found, merged state, no events."""
    (_, app_json, user_json), found = rows[0], rows[1:]
    times, ids, texts = zip(*found, strict=True) if found else ((), (), ())
    app_state, user_state, *states = _parse_states(
        texts, (app_json, "app_states"), (user_json, "user_states")
    )
    scoped = {**prefixed(app_state, State.APP_PREFIX), **prefixed(user_state, State.USER_PREFIX)}
    # Each session's field dict (Session's field order), its own state dict (session keys,
    # then app:, then user:, ADK's order) and its own events list.
    fields = [
        {
            "id": sid,
            "app_name": app_name,
            "user_id": user_id,
            "state": {**state, **scoped},
            "events": [],
            "last_update_time": update_time,
        }
        for sid, state, update_time in zip(ids, states, times, strict=True)
    ]
    return stored_listing(stored_sessions(fields))


def _app_listing(app_name: str, rows: list[tuple]) -> ListSessionsResponse:
    """Every user's sessions that ``ops.list_sessions`` found, merged state, no events."""
    (_, _, app_json, users_json), found = rows[0], rows[1:]
    times, uids, ids, texts = zip(*found, strict=True) if found else ((), (), (), ())
    app_state, *states = _parse_states(texts, (app_json, "app_states"))
    app_part = prefixed(app_state, State.APP_PREFIX)
    # The scoped keys of each user, merged once: app:, then user:.
    scoped = {
        uid: {**app_part, **prefixed(ops.loads_state(text, "user_states"), State.USER_PREFIX)}
        for uid, text in json.loads(users_json).items()
    }
    fields = [
        {
            "id": sid,
            "app_name": app_name,
            "user_id": uid,
            "state": {**state, **scoped.get(uid, app_part)},
            "events": [],
            "last_update_time": update_time,
        }
        for sid, uid, state, update_time in zip(ids, uids, states, times, strict=True)
    ]
    return stored_listing(stored_sessions(fields))


def _parse_path(db_path: Any) -> Path:
    """A filesystem path from a path, a str, or ADK's ``sqlite:///file.db`` URL."""
    if isinstance(db_path, os.PathLike):
        db_path = os.fspath(db_path)
    if not isinstance(db_path, str):
        raise InvalidArgumentError(
            f"db_path doit être un chemin de fichier (str ou Path), pas {type(db_path).__name__}."
        )
    if not db_path.strip():
        raise InvalidArgumentError("db_path ne doit pas être vide.")
    if db_path.startswith(("sqlite:", "sqlite+aiosqlite:")):
        raw = unquote(urlparse(db_path).path)
        db_path = raw[1:] if raw.startswith("/") else raw
    return Path(db_path)


def _check_location(path: Path) -> None:
    """``dbfile.check_location`` with the service's errors (``:memory:`` needs no file)."""
    if str(path) == ":memory:":
        return
    try:
        dbfile.check_location(path)
    except dbfile.UnreadableFileError as exc:
        raise ReadOnlyDatabaseError(str(exc)) from None
    except dbfile.DbFileError as exc:
        raise InvalidDatabaseError(str(exc)) from None


def _prepare(db: sqlite3.Connection, path: Path, read_only: bool) -> None:
    """Per-connection set-up; validates existing tables BEFORE changing anything in the file."""
    db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    db.execute("PRAGMA foreign_keys = ON")
    try:
        tables = {
            name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        }
    except sqlite3.OperationalError as exc:
        error = ReadOnlyDatabaseError if read_only else InvalidDatabaseError
        raise error(
            f"Impossible de lire la base {str(path)!r} ({exc}). Elle n'a pas été modifiée."
        ) from None
    except sqlite3.DatabaseError as exc:
        raise InvalidDatabaseError(
            f"Le fichier {str(path)!r} n'est pas une base SQLite lisible ({exc}). "
            "Il n'a pas été modifié."
        ) from None
    for table, expected in dbfile.COLUMNS.items():
        if table not in tables:
            if read_only:
                raise ReadOnlyDatabaseError(
                    f"La base {str(path)!r} est en lecture seule et n'a pas de table {table!r} : "
                    "ce n'est pas une base de sessions."
                )
            continue
        columns = {row[1] for row in db.execute(f"PRAGMA table_info({table})")}
        missing = [c for c in expected if c not in columns]
        if missing:
            raise InvalidDatabaseError(
                f"La table {table!r} de {str(path)!r} n'a pas les colonnes attendues "
                f"(il manque : {', '.join(missing)}). Ce fichier n'a pas le format des sessions "
                "d'ADK 2.10 ; il n'a pas été modifié."
            )
    if read_only:
        return
    if db.execute("PRAGMA journal_mode").fetchone()[0] != "wal" and str(path) != ":memory:":
        try:
            db.execute("PRAGMA journal_mode = WAL")
        except sqlite3.OperationalError:
            pass  # another program holds the file open in its old mode: keep that mode, still safe
    db.execute("PRAGMA synchronous = NORMAL")
    outdated = [
        name
        for name, columns in INDEX_COLUMNS.items()
        if tuple(row[2] for row in db.execute(f"PRAGMA index_info({name})")) != columns
    ]
    if outdated or not tables.issuperset(dbfile.COLUMNS):

        def create(d: sqlite3.Connection) -> None:
            for name in outdated:  # missing, or an older definition under that name
                d.execute(f"DROP INDEX IF EXISTS {name}")
            for statement in _statements(CREATE_SCHEMA_SQL):
                d.execute(statement)

        ops.write(db, create)


class _LockedInPlace(Exception):
    """A read in place met a lock that it would have had to wait for."""


def _without_waiting(db: sqlite3.Connection, job: Callable[[], Any]) -> Any:
    """``job()`` with a busy timeout of 0: it fails at once instead of waiting for a lock."""
    db.execute("PRAGMA busy_timeout = 0")
    try:
        return job()
    except sqlite3.OperationalError as exc:
        if ops.is_busy(exc):
            raise _LockedInPlace from exc
        raise
    finally:
        db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")


def _statements(script: str) -> list[str]:
    return [s.strip() for s in script.split(";") if s.strip()]


class SqliteSessionService(BaseSessionService):
    """Les sessions dans un fichier SQLite, au format d'ADK 2.10 (ADK le lit et l'écrit aussi).

    ``SqliteSessionService("tuteur.db")`` vérifie seulement le chemin ; la connexion s'ouvre au
    premier appel et reste ouverte jusqu'à ``await service.close()`` (ou la fin de
    ``async with SqliteSessionService(chemin) as service:``). ``service.db_path`` donne le
    chemin du fichier.
    """

    def __init__(self, db_path: str | os.PathLike[str]) -> None:
        self.db_path: Path = _parse_path(db_path)
        _check_location(self.db_path)
        self._conn: aiosqlite.Connection | None = None
        self._open_lock: asyncio.Lock | None = None
        self._closed = False
        self._read_only = False
        # Held by whichever thread runs statements on the connection: aiosqlite's worker for
        # every job, the event loop's thread for a read done in place (see _run).
        self._in_use = threading.Lock()

    def __repr__(self) -> str:
        state = "fermé" if self._closed else ("ouvert" if self._conn else "pas encore ouvert")
        return f"SqliteSessionService({str(self.db_path)!r}, {state})"

    @property
    def read_only(self) -> bool:
        """True si le fichier est en lecture seule : on lit, toute écriture lève
        ReadOnlyDatabaseError."""
        return self._read_only

    # -- connection -------------------------------------------------------------------------

    async def _connection(self) -> aiosqlite.Connection:
        if self._closed:
            raise ServiceClosedError(
                f"Ce service ({self.db_path}) a été fermé avec close() : créez-en un nouveau."
            )
        if self._conn is None:
            if self._open_lock is None:
                self._open_lock = asyncio.Lock()
            async with self._open_lock:
                if self._conn is None:
                    self._conn = await self._open()
        return self._conn

    async def _open(self) -> aiosqlite.Connection:
        path = self.db_path
        _check_location(path)
        self._read_only = dbfile.is_read_only(path)
        if self._read_only:
            target, uri = dbfile.readonly_uri(path), True
        else:
            target, uri = str(path), False
        # check_same_thread=False: reads may run in the event loop's thread (see _run), never
        # at the same time as the worker, which the _in_use lock ensures.
        conn = aiosqlite.connect(
            target, uri=uri, isolation_level=None, cached_statements=64, check_same_thread=False
        )
        # A forgotten close() must not keep the process alive at exit (aiosqlite's worker
        # thread is not a daemon): the OS closes the file and SQLite's journal stays sound.
        conn._thread.daemon = True
        try:
            await conn
        except sqlite3.Error as exc:
            raise InvalidDatabaseError(f"Impossible d'ouvrir {str(path)!r} : {exc}.") from None
        try:
            await conn._execute(lambda: _prepare(conn._conn, path, self._read_only))
        except BaseException:
            await conn.close()
            raise
        return conn

    async def _run(
        self,
        work: Callable[..., Any],
        *args: Any,
        write: bool = False,
        alone: bool = False,
        then: Callable[[Any], Any] | None = None,
    ) -> Any:
        """Run ``work(db, *args)`` inside one transaction (none of its own if ``alone``: a
        single statement is one already), then ``then(result)`` once it is over, so that
        building the results does not keep the database's read snapshot open.

        Writes run in aiosqlite's thread: they may wait for another program's lock and for
        the disk. A read runs in place, in the event loop's thread, when the connection is
        idle: the thread hop costs more than the read itself (0.1-0.2 ms against 0.05-0.2 ms
        for a session or a user's listing), and building the results is Python work that
        holds the GIL, so the worker would not free the loop for it anyway. A read in place
        never waits for a lock (busy timeout 0; in WAL mode readers seldom meet one): if it
        meets one, or if the worker holds the connection, it goes to the worker's queue."""
        conn = self._conn if self._conn is not None else await self._connection()
        if write and self._read_only:
            raise ReadOnlyDatabaseError(
                f"La base {str(self.db_path)!r} est en lecture seule (droits du fichier) : "
                "lecture possible, écriture refusée. Rien n'a été modifié."
            )
        runner = ops.write if write else ops.run_alone if alone else ops.read
        in_use = self._in_use

        def job() -> Any:
            if then is None:
                return runner(conn._conn, work, *args)
            # The cyclic GC paused while rows are read and results built from them: thousands
            # of small acyclic objects, which reference counting frees, that it would only
            # walk through while they are being made (a third of a big listing's time).
            gc_was_enabled = gc.isenabled()
            gc.disable()
            try:
                return then(runner(conn._conn, work, *args))
            finally:
                if gc_was_enabled:
                    gc.enable()

        def job_in_worker() -> Any:
            with in_use:
                return job()

        try:
            if not write and in_use.acquire(blocking=False):
                try:
                    return _without_waiting(conn._conn, job)
                except _LockedInPlace:
                    pass  # another program holds a lock: wait for it in the worker
                finally:
                    in_use.release()
            return await conn._execute(job_in_worker)
        except sqlite3.OperationalError as exc:
            if "readonly" in str(exc):
                raise ReadOnlyDatabaseError(
                    f"La base {str(self.db_path)!r} ne peut pas être écrite ({exc}). "
                    "Rien n'a été modifié."
                ) from None
            raise

    async def close(self) -> None:
        """Ferme la connexion (deux fois sans souci) : plus aucun descripteur ouvert sur le
        fichier ensuite."""
        self._closed = True
        conn, self._conn = self._conn, None
        if conn is not None:
            await conn.close()
            # The worker has returned its last result; wait the microseconds it needs to end.
            conn._thread.join(timeout=5)

    # -- API ----------------------------------------------------------------------------------

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
        deltas = self._split_initial_state(state)
        now = time.time()
        app_state, user_state, own = await self._run(
            ops.create_session, app_name, user_id, session_id, deltas, now, write=True
        )
        return Session(
            id=session_id,
            app_name=app_name,
            user_id=user_id,
            state=merge_state(app_state, user_state, own),
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
        self._check_ids(app_name, user_id, session_id)
        num_recent = config.num_recent_events if config else None
        after = config.after_timestamp if config else None
        return await self._run(
            ops.get_session,
            app_name,
            user_id,
            session_id,
            num_recent,
            after,
            then=partial(_session_from, app_name, user_id, session_id),
        )

    async def list_sessions(
        self, *, app_name: str, user_id: str | None = None
    ) -> ListSessionsResponse:
        check_name(app_name, "app_name")
        if user_id is not None:
            check_name(user_id, "user_id")
        then = (
            partial(_app_listing, app_name)
            if user_id is None
            else partial(_user_listing, app_name, user_id)
        )
        return await self._run(ops.list_sessions, app_name, user_id, alone=True, then=then)

    async def delete_session(self, *, app_name: str, user_id: str, session_id: str) -> None:
        self._check_ids(app_name, user_id, session_id)
        await self._run(ops.delete_session, app_name, user_id, session_id, write=True)

    async def get_user_state(self, *, app_name: str, user_id: str) -> dict[str, Any]:
        self._check_ids(app_name, user_id)
        return await self._run(ops.get_user_state, app_name, user_id)

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
        self._check_ids(app_name, user_id, session_id)
        self._check_page(after, limit, offset)
        events = await self._run(
            ops.list_events, app_name, user_id, session_id, after + offset, limit, then=_events_from
        )
        if events is None:
            raise SessionNotFoundError(f"Session {session_id!r} introuvable.")
        return events

    async def _store_event(self, session: Session, event: Event, event_json: str) -> float:
        return await self._run(
            ops.append_event,
            session.app_name,
            session.user_id,
            session.id,
            session.last_update_time,
            event.id,
            event.invocation_id,
            event.timestamp,
            event_json,
            split_state(event.actions.state_delta),
            write=True,
        )
