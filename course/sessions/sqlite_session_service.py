"""``SqliteSessionService``: sessions in a SQLite file in ADK 2.10's format.

Unlike ADK's service, it keeps ONE connection open (until ``close()`` or the end of an
``async with`` block), runs in WAL mode with a busy timeout, has an index for a session's events
in time order, and checks staleness inside the write transaction. Files stay interchangeable
with ADK's ``SqliteSessionService``. The SQL is in ``_sqlite_ops``, the tables in ``_schema``;
statements run through one ``ConnectionThread`` (writes in its thread, reads in place when the
connection is idle, see ``_run``); ``_speedups`` builds the results fast.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from .. import dbfile
from ..dossier import copy_advice, folder_write_error
from ..events import Event
from ..system_reason import french_reason
from . import _speedups as speedups
from . import _sqlite_ops as ops
from ._connection_thread import NOT_HERE, ConnectionThread
from ._schema import CREATE_SCHEMA_SQL, INDEX_COLUMNS
from .base_session_service import (
    BaseSessionService,
    GetSessionConfig,
    ListSessionsResponse,
    check_name,
)
from .errors import (
    InvalidArgumentError,
    InvalidDatabaseError,
    ReadOnlyDatabaseError,
    ServiceClosedError,
    SessionNotFoundError,
)
from .session import Session
from .state import merge_state, split_state

__all__ = ["SqliteSessionService"]

BUSY_TIMEOUT_MS = 5_000


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


def _open_error(path: Path, exc: sqlite3.Error) -> InvalidDatabaseError:
    """SQLite's « unable to open database file », said in French when the file's folder cannot
    be written: which file and why; in the notebook's own folder (a lesson's, turned read-only
    after its first cell: a sync tool, a chmod), the first cell's advice too."""
    folder = path.resolve().parent
    denied = folder_write_error(folder)
    if denied is None:
        return InvalidDatabaseError(f"Impossible d'ouvrir {str(path)!r}\u00a0: {exc}.")
    said = (
        f"Impossible d'ouvrir la base «\u00a0{path.name}\u00a0»\u00a0: son dossier, {folder}, "
        f"n'accepte pas d'écriture ({french_reason(denied)})."
    )
    lesson = folder == Path.cwd().resolve()  # elsewhere (the progress file, in the home) no copy
    return InvalidDatabaseError(f"{said} {copy_advice(folder)}" if lesson else said)


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
                    f"La base {str(path)!r} est en lecture seule et n'a pas de table "
                    f"{table!r}\u00a0: ce n'est pas une base de sessions."
                )
            continue
        columns = {row[1] for row in db.execute(f"PRAGMA table_info({table})")}
        missing = [c for c in expected if c not in columns]
        if missing:
            raise InvalidDatabaseError(
                f"La table {table!r} de {str(path)!r} n'a pas les colonnes attendues "
                f"(il manque\u00a0: {', '.join(missing)}). Ce fichier n'a pas le format des "
                "sessions d'ADK 2.10\u00a0; il n'a pas été modifié."
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


def _statements(script: str) -> list[str]:
    return [s.strip() for s in script.split(";") if s.strip()]


class SqliteSessionService(BaseSessionService):
    """Les sessions dans un fichier SQLite, au format d'ADK 2.10 (ADK le lit et l'écrit aussi).

    ``SqliteSessionService("tuteur.db")`` vérifie seulement le chemin\u00a0; la connexion s'ouvre au
    premier appel et reste ouverte jusqu'à ``await service.close()`` (ou la fin de
    ``async with SqliteSessionService(chemin) as service:``). ``service.db_path`` donne le
    chemin du fichier.
    """

    def __init__(self, db_path: str | os.PathLike[str]) -> None:
        self.db_path: Path = _parse_path(db_path)
        _check_location(self.db_path)
        self._conn: ConnectionThread | None = None
        self._open_lock: asyncio.Lock | None = None
        self._closed = False
        self._read_only = False

    def __repr__(self) -> str:
        state = "fermé" if self._closed else ("ouvert" if self._conn else "pas encore ouvert")
        return f"SqliteSessionService({str(self.db_path)!r}, {state})"

    @property
    def read_only(self) -> bool:
        """True si le fichier est en lecture seule\u00a0: on lit, toute écriture lève
        ReadOnlyDatabaseError."""
        return self._read_only

    # -- connection -------------------------------------------------------------------------

    async def _connection(self) -> ConnectionThread:
        if self._closed:
            raise ServiceClosedError(
                f"Ce service ({self.db_path}) a été fermé avec close()\u00a0: créez-en un nouveau "
                "(dans une leçon, réexécutez-la depuis sa première cellule)."
            )
        if self._conn is None:
            if self._open_lock is None:
                self._open_lock = asyncio.Lock()
            async with self._open_lock:
                if self._conn is None:
                    self._conn = await self._open()
        return self._conn

    async def _open(self) -> ConnectionThread:
        path = self.db_path
        _check_location(path)
        self._read_only = read_only = dbfile.is_read_only(path)
        target = dbfile.readonly_uri(path) if read_only else str(path)
        # check_same_thread=False: reads may run in the event loop's thread (see _run), never
        # at the same time as the connection's own thread, which ConnectionThread ensures.
        conn = ConnectionThread(BUSY_TIMEOUT_MS)
        try:
            await conn.open(
                partial(
                    sqlite3.connect,
                    target,
                    uri=read_only,
                    isolation_level=None,
                    cached_statements=64,
                    check_same_thread=False,
                )
            )
        except sqlite3.Error as exc:
            raise _open_error(path, exc) from None
        try:
            await conn.run(partial(_prepare, path=path, read_only=read_only))
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

        Writes run in the connection's thread: they may wait for another program's lock and
        for the disk. A read runs in place, in the event loop's thread, when the connection
        is idle and no other program holds a lock (``ConnectionThread.run_here``); otherwise
        it queues in the thread too."""
        conn = self._conn if self._conn is not None else await self._connection()
        if write and self._read_only:
            raise ReadOnlyDatabaseError(
                f"La base {str(self.db_path)!r} est en lecture seule (droits du fichier)\u00a0: "
                "lecture possible, écriture refusée. Rien n'a été modifié."
            )
        runner = ops.write if write else ops.run_alone if alone else ops.read

        def job(db: sqlite3.Connection) -> Any:
            if then is None:
                return runner(db, work, *args)
            return speedups.gc_paused(lambda: then(runner(db, work, *args)))

        try:
            if not write:
                result = conn.run_here(job)
                if result is not NOT_HERE:
                    await self._hand_back()  # a loop of reads in place: Stop still felt
                    return result
            return await conn.run(job)
        except sqlite3.OperationalError as exc:
            if "readonly" in str(exc):
                raise ReadOnlyDatabaseError(
                    f"La base {str(self.db_path)!r} ne peut pas être écrite ({exc}). "
                    "Rien n'a été modifié."
                ) from None
            raise

    async def close(self) -> None:
        """Ferme la connexion (deux fois sans souci)\u00a0: plus aucun descripteur ouvert sur le
        fichier ensuite."""
        self._closed = True
        conn, self._conn = self._conn, None
        if conn is not None:
            await conn.close()

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
            then=partial(speedups.session_from, app_name, user_id, session_id),
        )

    async def list_sessions(
        self, *, app_name: str, user_id: str | None = None
    ) -> ListSessionsResponse:
        check_name(app_name, "app_name")
        if user_id is not None:
            check_name(user_id, "user_id")
        then = (
            partial(speedups.app_listing, app_name)
            if user_id is None
            else partial(speedups.user_listing, app_name, user_id)
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
            ops.list_events,
            app_name,
            user_id,
            session_id,
            after + offset,
            limit,
            then=speedups.events_from,
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
