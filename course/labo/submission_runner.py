"""Runs a student's ``oublier`` in its own clean process:
``python -I -m course.labo.submission_runner WORK_DIR JOURNAL_FD < PLAN.json``.

The grading process starts it (in the sandbox when grading, see ``course.labo.sandbox``), with a
time limit, and never imports anything from the notebook's kernel. The work folder holds the
cell (``submission.py``) and fresh copies of the base. For each planned call it opens a new
``SqliteSessionService`` on its copy (the course's; or, for the ADK appendix, google-adk 2.10's,
given the path as ``db_path`` since ADK keeps it private), awaits ``oublier(service, user_id)``,
copies the database file and its ``-wal`` as they are right after the call (before the service
closes, as in a tutor that keeps running), then writes the call's outcome on the journal (a
pipe). The files are judged by another fresh process (``course.labo.snapshot_checker``).

Connections the student's code opens with ``sqlite3.connect`` are watched: one left with an open
transaction is reported (it holds the database's write lock), then closed, so that the next call
starts as it would in a new process.
"""

from __future__ import annotations

import asyncio
import inspect
import os
import shutil
import sqlite3
import sys
import threading
import time
import weakref
from pathlib import Path

from course.app import APP_NAME

from .protocol import (
    CallOutcome,
    LoadFailure,
    RaisedError,
    Ready,
    RunPlan,
    Stalled,
    encode_record,
)

__all__ = ["PRELUDE", "SNAPSHOTS", "SUBMISSION", "main"]

SUBMISSION = "submission.py"
SNAPSHOTS = "snapshots"
# Names the TP's first cell imports: the student's cell finds them here too, and nothing more.
PRELUDE = ("APP_NAME", "SqliteSessionService", "sqlite3")
# The watchdog writes its record this long before the deadline, while the process still runs.
WATCHDOG_MARGIN = 0.5

# Captured before any student code runs: patching these modules later changes nothing here.
_copyfile = shutil.copyfile
_exists = os.path.exists
_isawaitable = inspect.isawaitable
_connect = sqlite3.connect
_monotonic = time.monotonic


class _WatchedConnection(sqlite3.Connection):
    """sqlite3's connection, weak-referenceable so the runner can find those left open."""


class _Watch:
    """Connections opened through ``sqlite3.connect`` since the process started."""

    def __init__(self) -> None:
        self._connections: weakref.WeakSet[sqlite3.Connection] = weakref.WeakSet()
        self._lock = threading.Lock()

    def connect(self, *args, **kwargs):
        """sqlite3.connect, watched, with secure_delete OFF (upstream SQLite's default).

        Debian's build turns secure_delete ON, macOS's and conda-forge's do not: forcing OFF
        makes the "nothing readable in the file" check the same on every machine. A student may
        still turn it ON on their own connection. ``check_same_thread=False`` lets the runner
        close a connection left open from its own thread.
        """
        if len(args) < 6 and "factory" not in kwargs:
            kwargs["factory"] = _WatchedConnection
        if len(args) < 5:
            kwargs.setdefault("check_same_thread", False)
        conn = _connect(*args, **kwargs)
        try:
            conn.execute("PRAGMA secure_delete = OFF")
        except sqlite3.Error:
            pass
        if isinstance(conn, _WatchedConnection):
            with self._lock:
                self._connections.add(conn)
        return conn

    def _open(self) -> list[sqlite3.Connection]:
        with self._lock:
            connections = list(self._connections)
        alive = []
        for conn in connections:
            try:
                conn.total_changes  # noqa: B018 - raises ProgrammingError once closed
            except sqlite3.Error:
                continue
            alive.append(conn)
        return alive

    def open_transaction(self) -> bool:
        """True if a connection still open holds an uncommitted transaction."""
        for conn in self._open():
            try:
                if conn.in_transaction:
                    return True
            except sqlite3.Error:
                pass
        return False

    def close_all(self) -> None:
        """Close (rolling back) every connection still open."""
        for conn in self._open():
            try:
                conn.close()
            except sqlite3.Error:
                pass


def _adk_service(path: Path):
    """google-adk 2.10's SqliteSessionService on `path`, with the path a learner keeps herself
    (ADK has no ``db_path``) under the name the TP's ``oublier`` reads."""
    from google.adk.sessions.sqlite_session_service import SqliteSessionService as Adk

    service = Adk(str(path))
    service.db_path = str(path)
    return service


def _describe(exc: BaseException) -> RaisedError:
    return RaisedError(type(exc).__name__, str(exc)[:500])


def _start_watchdog(plan: RunPlan, watch: _Watch, current: list[str], write) -> None:
    """Just before the deadline, say which call is still running and whether a connection of the
    student's holds a transaction (the usual reason for waiting: its own lock)."""

    def run() -> None:
        delay = plan.deadline - WATCHDOG_MARGIN - _monotonic()
        if delay > 0:
            time.sleep(delay)
        running = list(current)
        if running:
            write(encode_record(Stalled(running[0], watch.open_transaction())))

    threading.Thread(target=run, name="watchdog", daemon=True).start()


async def _run_calls(oublier, work: Path, plan: RunPlan, service_cls, watch, write, current):
    snapshots = work / SNAPSHOTS
    for call in plan.calls:
        path = work / call.database
        current[:] = [call.call_id]
        error, not_async, open_tx, service = None, False, False, None
        try:
            service = service_cls(path)
            result = oublier(service, call.user_id)
            if _isawaitable(result):
                await result
            else:
                not_async = True
            open_tx = watch.open_transaction()
        except BaseException as exc:  # noqa: B036 - a student's sys.exit() is an outcome too
            error = _describe(exc)
            open_tx = watch.open_transaction()  # while the traceback still holds its frames
        for suffix in ("", "-wal"):
            if _exists(f"{path}{suffix}"):
                try:
                    _copyfile(f"{path}{suffix}", snapshots / f"{call.call_id}.db{suffix}")
                except OSError:
                    pass
        if service is not None:
            try:
                await service.close()
            except BaseException:  # noqa: B036
                pass
        watch.close_all()
        write(encode_record(CallOutcome(call.call_id, error, not_async, open_tx)))
        current.clear()


def main(workdir: str, journal_fd: int) -> int:
    work = Path(workdir)
    plan = RunPlan.from_json(sys.stdin.read())
    (work / SNAPSHOTS).mkdir(exist_ok=True)
    journal = os.fdopen(journal_fd, "w", buffering=1, encoding="utf-8")
    lock = threading.Lock()

    def write(line: str) -> None:  # from the main thread and the watchdog's
        with lock:
            journal.write(line)

    watch = _Watch()
    sqlite3.connect = watch.connect
    from course.sessions import SqliteSessionService

    namespace = {"__name__": "submission"}
    namespace.update(zip(PRELUDE, (APP_NAME, SqliteSessionService, sqlite3), strict=True))
    source = (work / SUBMISSION).read_text(encoding="utf-8")
    write(encode_record(Ready()))
    try:
        code = compile(source, "cellule_oublier", "exec")
    except SyntaxError as exc:
        write(encode_record(LoadFailure("syntax", _describe(exc))))
        return 0
    try:
        exec(code, namespace)  # noqa: S102
    except BaseException as exc:  # noqa: B036
        write(encode_record(LoadFailure("exception", _describe(exc))))
        return 0
    oublier = namespace.get("oublier")
    if not callable(oublier):
        write(encode_record(LoadFailure("missing")))
        return 0
    os.chdir(work)
    current: list[str] = []
    _start_watchdog(plan, watch, current, write)
    service_cls = _adk_service if plan.service == "adk" else SqliteSessionService
    asyncio.run(_run_calls(oublier, work, plan, service_cls, watch, write, current))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], int(sys.argv[2])))
