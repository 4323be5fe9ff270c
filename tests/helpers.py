"""Plain helpers shared by the tests (``from helpers import ...``; ``tests/`` is on sys.path).

The repository's root, the four session services under one spelling, a one-line event, and
the process and port helpers of the tests that start real servers (lab, hub, formgrader):
processes are read with psutil and every server a test starts is stopped by its id.
Fixtures built on these live in ``tests/conftest.py``.
"""

from __future__ import annotations

import os
import signal
import socket
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psutil

__all__ = [
    "REPO",
    "SERVICE_KINDS",
    "alive",
    "close_service",
    "free_port",
    "make_service",
    "network_free_env",
    "open_files_under",
    "port_open",
    "processes_matching",
    "say",
    "stop_pids",
]

REPO = Path(__file__).resolve().parent.parent

# The session services every test of the tutor and of the service runs against: the course's
# two and, as the reference, google-adk 2.10's two.
SERVICE_KINDS = ("course-memory", "course-sqlite", "adk-memory", "adk-sqlite")


def make_service(kind: str, db_path: Path | None) -> Any:
    """A fresh session service of one of ``SERVICE_KINDS``; the SQLite ones on ``db_path``."""
    if kind == "course-memory":
        from course.sessions import InMemorySessionService

        return InMemorySessionService()
    if kind == "course-sqlite":
        from course.sessions import SqliteSessionService

        return SqliteSessionService(db_path)
    if kind == "adk-memory":
        from google.adk.sessions import InMemorySessionService as AdkMemory

        return AdkMemory()
    if kind == "adk-sqlite":
        from google.adk.sessions.sqlite_session_service import SqliteSessionService as AdkSqlite

        return AdkSqlite(str(db_path))
    raise ValueError(f"unknown service kind {kind!r}: one of {SERVICE_KINDS}")


async def close_service(service: Any) -> None:
    """``await service.close()`` where the service has one (ADK's SQLite service has none)."""
    close = getattr(service, "close", None)
    if close is not None:
        await close()


def say(text: str, delta: dict[str, Any] | None = None, **fields: Any) -> Any:
    """An event of the course's own classes: the learner says ``text`` (with ``delta`` as its
    state delta); ``fields`` set any other Event field."""
    from course.events import Content, Event, EventActions, Part

    fields.setdefault("author", "user")
    fields.setdefault("invocation_id", "inv")
    if delta is not None:
        fields["actions"] = EventActions(state_delta=delta)
    return Event(content=Content(role="user", parts=[Part(text=text)]), **fields)


def network_free_env() -> dict[str, str]:
    """This environment for a child Python that cannot open a network connection (sockets
    blocked by ``tests/lecons/sans_reseau``), with the checkout's ``course`` importable."""
    env = dict(os.environ)
    blocker = REPO / "tests" / "lecons" / "sans_reseau"
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(blocker), str(REPO), env.get("PYTHONPATH")) if p
    )
    env.pop("TUTEUR_DB", None)
    return env


def open_files_under(prefix: Path) -> list[str]:
    """Files this process holds open whose path starts with ``prefix`` (a db, -wal, -shm)."""
    return sorted(f.path for f in psutil.Process().open_files() if f.path.startswith(str(prefix)))


# -- processes and ports ----------------------------------------------------------------------


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def port_open(port: int) -> bool:
    """True while something accepts connections on 127.0.0.1:``port``."""
    with socket.socket() as sock:
        sock.settimeout(0.5)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def processes_matching(match: Callable[[int, str], bool]) -> list[str]:
    """Live processes (zombies included: not yet reaped is not gone) whose real uid and command
    line satisfy ``match(uid, cmdline)``, one line each: ``pid uid=… state ppid=… name``."""
    found = []
    for proc in psutil.process_iter():
        try:
            with proc.oneshot():
                uid, state, ppid, name = proc.uids().real, proc.status(), proc.ppid(), proc.name()
                try:
                    cmdline = " ".join(proc.cmdline())
                except psutil.ZombieProcess:
                    cmdline = ""
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
        if match(uid, cmdline):
            found.append(f"{proc.pid} uid={uid} {state} ppid={ppid} {name} {cmdline}".rstrip())
    return found


def alive(pid: int) -> bool:
    """True while ``pid`` exists and is not a zombie (whoever owns it)."""
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _signal_each(pids: list[int], signum: int) -> None:
    for pid in pids:
        try:
            os.kill(pid, signum)
        except ProcessLookupError:
            pass


def _wait_gone(pids: list[int], seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and any(alive(p) for p in pids):
        time.sleep(0.1)


def stop_pids(pids: list[int], grace: float = 10.0) -> list[int]:
    """SIGTERM each pid, wait up to ``grace`` seconds, SIGKILL the rest; returns survivors.

    A stopped child is not reaped here: whoever started it (a ``Popen``) still reads its
    exit status.
    """
    _signal_each(pids, signal.SIGTERM)
    _wait_gone(pids, grace)
    _signal_each([p for p in pids if alive(p)], signal.SIGKILL)
    _wait_gone(pids, 5)
    return [p for p in pids if alive(p)]
