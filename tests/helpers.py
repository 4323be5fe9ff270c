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
import sqlite3
import subprocess
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil

__all__ = [
    "LESSON_PROGRESSION",
    "load_factor",
    "REPO",
    "SERVER_KINDS",
    "SERVICE_KINDS",
    "STORAGE",
    "Backend",
    "alive",
    "close_service",
    "command_line",
    "PORT_FIRST",
    "PORT_SLICE",
    "free_port",
    "http_server",
    "in_empty_tmp",
    "make_backend",
    "make_service",
    "network_free_env",
    "open_files_under",
    "port_open",
    "processes_left",
    "processes_matching",
    "say",
    "stop_group",
    "stop_pids",
    "tp_points",
    "wait_for_http",
]

REPO = Path(__file__).resolve().parent.parent

# Alice's user state as the lessons show it (after the tutor's demo), one copy for the tests
# that write it and the ones that expect it
LESSON_PROGRESSION = {
    "progression": {
        "python": {
            "niveau": 4,
            "serie": [False],
            "bonnes": 2,
            "total": 3,
            "a_revoir": ["décorateurs de fonction"],
        }
    }
}

# The session services every test of the tutor and of the service runs against: the course's
# two and, as the reference, google-adk 2.10's two. Each kind says where its storage lives,
# which decides what a second instance is (``Backend.again``): "file", a new service object on
# the same file; "object", the service object itself (an in-memory store lives in its object:
# a second object would be a second, empty store, so two callers share one by sharing the
# object). A server backend would add "server" (a new client on the same URL); a kind that
# declares no storage is refused, so it can never get a second instance by accident.
SERVICE_KINDS = ("course-memory", "course-sqlite", "adk-memory", "adk-sqlite")
# ADK 2.10's DatabaseSessionService on a private PostgreSQL (course.postgres): only the modules
# that opt in run on it (``ALSO_ON_SERVERS = True``; tests/conftest.py), a fresh database each.
SERVER_KINDS = ("adk-postgres",)
STORAGE = {
    "course-memory": "object",
    "course-sqlite": "file",
    "adk-memory": "object",
    "adk-sqlite": "file",
    "adk-postgres": "server",
}


def make_service(kind: str, db_path: Path | None, db_url: str | None = None) -> Any:
    """A fresh session service of one of ``SERVICE_KINDS``; the SQLite ones on ``db_path``,
    a server one on ``db_url``."""
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
    if kind == "adk-postgres":
        from google.adk.sessions.database_session_service import DatabaseSessionService

        assert db_url is not None, "adk-postgres needs a db_url"
        return DatabaseSessionService(db_url)
    raise ValueError(f"unknown service kind {kind!r}: one of {SERVICE_KINDS}")


async def close_service(service: Any) -> None:
    """``await service.close()`` where the service has one (ADK's SQLite service has none)."""
    close = getattr(service, "close", None)
    if close is not None:
        await close()


@dataclass
class Backend:
    """A session service of one kind, with the model classes and errors that go with it
    (course.events and course.sessions, or google.adk and google.genai), so that one test
    body serves every kind."""

    name: str
    service: Any
    db_path: Path | None
    events: Any  # the module holding Event, EventActions, Content, Part and the part kinds
    GetSessionConfig: Any
    AlreadyExistsError: type[BaseException]
    SessionNotFoundError: type[BaseException]
    StaleSessionError: type[BaseException]
    db_url: str | None = None  # a server kind's database

    @property
    def is_adk(self) -> bool:
        return self.name.startswith("adk")

    def __getattr__(self, name: str) -> Any:
        # Event, EventActions, Content, Part, Blob, FunctionCall...: the kind's own classes
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.events, name)

    def again(self) -> Any:
        """A second service instance on the same storage (see ``STORAGE``)."""
        storage = STORAGE[self.name]
        if storage == "file":
            return make_service(self.name, self.db_path)
        if storage == "object":
            return self.service
        if storage == "server":  # a new client on the same database
            return make_service(self.name, None, self.db_url)
        raise ValueError(f"no second instance declared for storage {storage!r}")

    def text_event(self, text: str, author: str = "user", delta: dict | None = None, **kw):
        """An event carrying one text part and an optional state delta."""
        role = "user" if author == "user" else "model"
        return self.Event(
            author=author,
            invocation_id=kw.pop("invocation_id", "inv-1"),
            content=self.Content(role=role, parts=[self.Part(text=text)]),
            actions=self.EventActions(state_delta=delta or {}),
            **kw,
        )

    def sql(self, query: str, params: tuple = ()) -> list[tuple]:
        """Read the file directly (file backends only)."""
        assert self.db_path is not None
        with sqlite3.connect(self.db_path) as conn:
            return conn.execute(query, params).fetchall()


def make_backend(kind: str, db_path: Path | None, db_url: str | None = None) -> Backend:
    """A fresh ``Backend`` of one of ``SERVICE_KINDS`` or ``SERVER_KINDS`` (a file kind on
    ``db_path``, a server kind on ``db_url``)."""
    if kind not in STORAGE:
        raise ValueError(f"unknown service kind {kind!r}: one of {SERVICE_KINDS + SERVER_KINDS}")
    if STORAGE[kind] == "file" and db_path is None:
        raise ValueError(f"{kind} needs a db_path")
    if STORAGE[kind] == "server" and db_url is None:
        raise ValueError(f"{kind} needs a db_url")
    if STORAGE[kind] != "file":
        db_path = None
    service = make_service(kind, db_path, db_url)
    if kind.startswith("course"):
        from course import events, sessions

        return Backend(
            kind,
            service,
            db_path,
            events,
            sessions.GetSessionConfig,
            sessions.AlreadyExistsError,
            sessions.SessionNotFoundError,
            sessions.StaleSessionError,
        )
    from google.adk.errors._stale_session_error import StaleSessionError
    from google.adk.errors.already_exists_error import AlreadyExistsError
    from google.adk.errors.session_not_found_error import SessionNotFoundError
    from google.adk.sessions.base_session_service import GetSessionConfig

    return Backend(
        kind,
        service,
        db_path,
        _AdkEvents(),
        GetSessionConfig,
        AlreadyExistsError,
        SessionNotFoundError,
        StaleSessionError,
        db_url,
    )


class _AdkEvents:
    """ADK's Event and EventActions, google.genai's content types, under one roof."""

    def __getattr__(self, name: str) -> Any:
        from google.adk import events
        from google.adk.events import event_actions
        from google.adk.tools import tool_confirmation
        from google.genai import types

        for module in (events, event_actions, tool_confirmation, types):
            if hasattr(module, name):
                return getattr(module, name)
        raise AttributeError(name)


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


def load_factor() -> float:
    """How much slower than on a free core things run now: the run queue per core, at least 1.

    A wall-clock bound in a test is multiplied by it, so that the suite's own parallel workers
    or a loaded CI runner cannot make a correct test fail (a hang still does)."""
    return max(1.0, os.getloadavg()[0] / (os.cpu_count() or 1))


# Ports handed out by free_port: 10000-19999, below Linux's ephemeral range (32768-60999) and
# below the hub's user servers (a test hub's classhub.port_base + user id: 20000-28999; the class
# rush's 29100 + id). Asking the OS (bind port 0, close) twice can give the same port twice, and a
# server another worker starts on port 0 can take it before ours binds: CI saw a hub and its
# proxy on one port.
# Each xdist worker draws from its own slice, in turn, so no two servers of a run share one.
PORT_FIRST, PORT_SLICE, PORT_SLICES = 10000, 1250, 8
_next_port: list[int] = []


def _worker_slice() -> int:
    """This process's slice of the test ports: its xdist worker number (gw0 -> 0), else 0."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
    digits = worker.removeprefix("gw")
    return int(digits) % PORT_SLICES if digits.isdigit() else 0


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now, never handed out before by this worker's slice."""
    first = PORT_FIRST + _worker_slice() * PORT_SLICE
    if not _next_port:
        # a different start per process: a rerun does not meet the last run's TIME_WAITs
        _next_port.append(first + os.getpid() % PORT_SLICE)
    for _ in range(PORT_SLICE):
        port = _next_port[0]
        _next_port[0] = first + (port + 1 - first) % PORT_SLICE
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue  # taken by something else: the next one
            return port
    raise RuntimeError(f"no free port in {first}-{first + PORT_SLICE - 1}")


def port_open(port: int) -> bool:
    """True while something accepts connections on 127.0.0.1:``port``."""
    with socket.socket() as sock:
        sock.settimeout(0.5)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def _other_workers() -> set[int]:
    """The other pytest-xdist workers of this run (the master's other children), if any."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return set()
    try:
        return {c.pid for c in psutil.Process(os.getppid()).children() if c.pid != os.getpid()}
    except psutil.NoSuchProcess:
        return set()


def _foreign(proc: psutil.Process, others: set[int], mine: set[int]) -> bool:
    """Whether `proc` was started, and is still held, by another run: another pytest-xdist
    worker's grading (`others`), another test suite on the machine (a pytest process among its
    ancestors below this one's own, `mine`). One that escaped a test is reparented away from its
    run (to init, a subreaper), so it is never foreign."""
    try:
        for parent in proc.parents():  # nearest first, up to init
            if parent.pid == os.getpid() or parent.pid in mine:
                return False
            if parent.pid in others or "pytest" in " ".join(parent.cmdline()):
                return True
    except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
        return False
    return False


def processes_matching(match: Callable[[int, str], bool]) -> list[str]:
    """Live processes (zombies included: not yet reaped is not gone) whose real uid and command
    line satisfy ``match(uid, cmdline)``, one line each: ``pid uid=… state ppid=… name``.

    The processes another run started and still runs (another pytest-xdist worker's gradings,
    another suite on the machine) are left out: they are not this test's. A process that escaped
    any test is reparented away from its run, so it is still found."""
    others, mine = _other_workers(), {p.pid for p in psutil.Process().parents()}
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
        if match(uid, cmdline) and not _foreign(proc, others, mine):
            found.append(f"{proc.pid} uid={uid} {state} ppid={ppid} {name} {cmdline}".rstrip())
    return found


def processes_left(match: Callable[[int, str], bool], seconds: float = 10.0) -> list[str]:
    """``processes_matching(match)`` once it is empty, or as it stands after `seconds`.

    A process whose parent died before reaping it is the machine's init's to reap, on init's own
    schedule (this machine's reaps about once a second): such a zombie runs no code, yet it is
    listed until then. A process that escaped is still listed at the end."""
    deadline = time.monotonic() + seconds
    while (left := processes_matching(match)) and time.monotonic() < deadline:
        time.sleep(0.2)
    return left


def command_line(process: psutil.Process | int) -> str:
    """A process's command line, or "" once it has exited: a child listed a moment ago may be a
    zombie by now (it has no command line left), however the machine's load times it."""
    try:
        proc = process if isinstance(process, psutil.Process) else psutil.Process(process)
        return " ".join(proc.cmdline())
    except psutil.Error:
        return ""


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


def stop_group(proc: subprocess.Popen, grace: float = 20.0) -> None:
    """Stop a process started with ``start_new_session=True`` and its whole group (a server
    and the kernels it started): SIGTERM, SIGKILL after ``grace`` seconds, reaped."""
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=grace)
    except ProcessLookupError:
        proc.wait()
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def wait_for_http(
    url: str,
    proc: subprocess.Popen,
    log: Path,
    what: str,
    headers: dict[str, str] | None = None,
    timeout: float = 120,
) -> None:
    """Wait until ``url`` answers 200 while ``proc`` (the server ``what``, writing ``log``)
    runs; fails with its log if it exits, and after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            request = urllib.request.Request(url, headers=headers or {})
            with urllib.request.urlopen(request, timeout=10) as response:  # noqa: S310 - local
                if response.status == 200:
                    return
        except OSError:
            pass
        assert proc.poll() is None, f"{what} exited:\n{log.read_text(errors='replace')[-3000:]}"
        assert time.monotonic() < deadline, f"{what} did not answer within {timeout:.0f} s"
        time.sleep(1)


def tp_points() -> tuple[int, int]:
    """The graded TP's points: its automatic tests' (the criteria table, course/labo/criteria.py)
    and the written answer's, graded by hand (the TP's source notebook). Tests compare a full
    score with these, so a new criterion needs no edit in tests."""
    import nbformat

    from course.labo.criteria import TESTS

    nb = nbformat.read(REPO / "solutions" / "oublier" / "oublier.ipynb", as_version=4)
    by_hand = sum(
        cell.metadata["nbgrader"]["points"]
        for cell in nb.cells
        if cell.metadata.get("nbgrader", {}).get("grade")
        and cell.metadata["nbgrader"].get("solution")
    )
    return sum(test.points for test in TESTS.values()), by_hand


@contextmanager
def http_server(
    cmd: list[str],
    cwd: Path,
    env: dict[str, str],
    log: Path,
    url: str,
    what: str,
    headers: dict[str, str] | None = None,
    timeout: float = 120,
) -> Iterator[subprocess.Popen]:
    """``cmd`` (a server: make lab, formgrader, jupyter server) started in its own session with
    its output in ``log``, once ``url`` answers; stopped with its whole group on exit."""
    with log.open("wb") as out:
        proc = subprocess.Popen(
            cmd,
            cwd=cwd,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    try:
        wait_for_http(url, proc, log, what, headers, timeout)
        yield proc
    finally:
        stop_group(proc)


def in_empty_tmp(command: list[str], tmp_size: str = "512m", empty_run: bool = False) -> list[str]:
    """`command` in a mount namespace whose /tmp (and /run with `empty_run`) is an empty tmpfs,
    so that no other process of the machine writes there. A clone under /tmp (a fresh clone's,
    CI's) stays reachable: its folder is opened before the tmpfs hides it, then bound back at its
    place (``--no-canonicalize``: mount would otherwise resolve the descriptor's path to the new,
    empty folder). It was there before the command ran, so it is not new in /tmp."""
    keep = [Path("/tmp", p.parts[2]) for p in (REPO.resolve(),) if p.parts[1:2] == ("tmp",)]
    opened = "".join(f'exec {3 + k}<"{path}"\n' for k, path in enumerate(keep))
    bound = "".join(
        f'mkdir "{path}"\nmount --no-canonicalize --bind /proc/self/fd/{3 + k} "{path}"\n'
        for k, path in enumerate(keep)
    )
    run = "mount -t tmpfs -o mode=0755,size=8m cours-run /run\n" if empty_run else ""
    script = (
        f"set -e\n{opened}mount -t tmpfs -o mode=1777,size={tmp_size} cours-tmp /tmp\n"
        f'{bound}{run}exec "$@"'
    )
    return ["unshare", "--mount", "--propagation", "private", "/bin/sh", "-c", script, "sh"] + [
        *command
    ]
