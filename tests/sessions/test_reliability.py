"""Reliability with real processes and real files: kill -9, two writers, bad input.

Each child is ``session_worker.py`` in its own Python process; every child is stopped by its
pid at the end of its test, even when the test fails.
"""

from __future__ import annotations

import hashlib
import os
import queue
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from helpers import REPO, say

from course.sessions import (
    AlreadyExistsError,
    DuplicateEventError,
    InvalidArgumentError,
    InvalidDatabaseError,
    ReadOnlyDatabaseError,
    SqliteSessionService,
    StaleSessionError,
)

WORKER = Path(__file__).with_name("session_worker.py")
APP = "tuteur"


class Child:
    """A worker process whose stdout lines are read by a thread into a queue."""

    def __init__(
        self, *args: str, python: str = sys.executable, script: Path = WORKER, **popen
    ) -> None:
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(
            [str(REPO / "tests"), str(REPO), env.get("PYTHONPATH", "")]
        )
        env.update(popen.pop("env", {}))
        self.proc = subprocess.Popen(
            [python, str(script), *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            **popen,
        )
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.seen: list[str] = []
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        for line in self.proc.stdout:
            self.lines.put(line.rstrip("\n"))
        self.lines.put(None)

    def next_line(self, timeout: float = 60) -> str:
        line = self.lines.get(timeout=timeout)
        if line is None:
            raise AssertionError(f"le processus s'est arrêté : {self.proc.stderr.read()}")
        self.seen.append(line)
        return line

    def send(self, line: str) -> None:
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def rest(self) -> list[str]:
        """Every line still in the pipe, once the process has ended."""
        out = []
        while (line := self.lines.get(timeout=30)) is not None:
            out.append(line)
        return out

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=30)
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            try:
                stream.close()
            except OSError:
                pass


@pytest.fixture
def children():
    """Start workers with ``children(*args)``; all are killed by pid at the end."""
    started: list[Child] = []

    def start(*args: str, **popen) -> Child:
        child = Child(*args, **popen)
        started.append(child)
        return child

    yield start
    for child in started:
        child.stop()


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def sql(path: Path, query: str, params: tuple = ()) -> list[tuple]:
    with sqlite3.connect(path) as conn:
        return conn.execute(query, params).fetchall()


async def make_db(path: Path, sessions: int = 1) -> list[str]:
    """A database with ``sessions`` sessions of alice, two events each; returns their ids."""
    ids = []
    async with SqliteSessionService(path) as service:
        for _ in range(sessions):
            session = await service.create_session(
                app_name=APP, user_id="alice", state={"user:niveau": 1}
            )
            for text in ("Bonjour", "Au revoir"):
                await service.append_event(session=session, event=say(text))
            ids.append(session.id)
    return ids


# -- crashes and concurrency ----------------------------------------------------------------


async def test_sigkill_mid_stream_loses_no_acknowledged_event(tmp_path, children):
    db = tmp_path / "tuteur.db"
    (session_id,) = await make_db(db)
    acknowledged: list[str] = []
    for round_ in range(3):
        child = children("stream", str(db), session_id)
        for _ in range(100 + 70 * round_):
            acknowledged.append(child.next_line())
        os.kill(child.proc.pid, signal.SIGKILL)
        child.proc.wait(timeout=30)
        acknowledged.extend(child.rest())
        assert child.proc.returncode == -signal.SIGKILL
    assert sql(db, "PRAGMA integrity_check") == [("ok",)]
    stored = {row[0] for row in sql(db, "SELECT id FROM events WHERE session_id=?", (session_id,))}
    missing = [event_id for event_id in acknowledged if event_id not in stored]
    assert missing == [], f"{len(missing)} événements confirmés puis perdus"
    assert len(acknowledged) >= 100 + 170 + 240
    async with SqliteSessionService(db) as service:
        again = await service.get_session(app_name=APP, user_id="alice", session_id=session_id)
        assert len(again.events) == len(stored)


async def test_two_processes_append_500_events_each(tmp_path, children):
    db = tmp_path / "partage.db"  # not created yet: both children also race to create it
    writers = [children("many", str(db), user, "500") for user in ("alice", "bob")]
    for writer in writers:
        assert writer.next_line() == "ready"
    for writer in writers:
        writer.send("go")
    for writer in writers:
        assert writer.next_line(timeout=120) == "done 500"
        writer.proc.wait(timeout=30)
        stderr = writer.proc.stderr.read()
        assert writer.proc.returncode == 0, stderr
        assert "locked" not in stderr
    assert sql(db, "SELECT user_id, COUNT(*) FROM events GROUP BY user_id") == [
        ("alice", 500),
        ("bob", 500),
    ]
    assert sql(db, "PRAGMA integrity_check") == [("ok",)]
    async with SqliteSessionService(db) as service:
        session = (await service.list_sessions(app_name=APP, user_id="alice")).sessions[0]
        assert session.state == {"app:dernier_alice": 499, "app:dernier_bob": 499}


async def test_two_processes_racing_on_one_session_exactly_one_wins(tmp_path, children):
    db = tmp_path / "course.db"
    await make_db(db)
    racers = [children("race", str(db)) for _ in range(2)]
    async with SqliteSessionService(db) as service:
        for trial in range(50):
            session = await service.create_session(
                app_name=APP, user_id="alice", session_id=f"course-{trial}"
            )
            for racer in racers:
                racer.send(f"load {session.id}")
            assert [r.next_line() for r in racers] == ["ready", "ready"]
            for racer in racers:
                racer.send("go")
            outcomes = sorted(r.next_line() for r in racers)
            assert outcomes == ["ok", "stale"], f"essai {trial}"
            again = await service.get_session(app_name=APP, user_id="alice", session_id=session.id)
            assert len(again.events) == 1
    for racer in racers:
        racer.send("quit")


def test_forgotten_close_does_not_keep_the_process_alive(tmp_path, children):
    db = tmp_path / "oubli.db"
    child = children("forget", str(db))
    assert child.next_line() == "appended"
    assert child.proc.wait(timeout=20) == 0
    assert sql(db, "SELECT COUNT(*) FROM events WHERE user_id='oubli'") == [(1,)]
    assert sql(db, "PRAGMA integrity_check") == [("ok",)]


# -- bad input leaves the file as it was -----------------------------------------------------


def test_path_in_missing_folder_is_refused_in_french(tmp_path):
    target = tmp_path / "absent" / "tuteur.db"
    with pytest.raises(InvalidDatabaseError, match="n'existe pas"):
        SqliteSessionService(target)
    assert not target.parent.exists()


@pytest.mark.parametrize(
    "content",
    [b"Ceci est un texte, pas une base.\n" * 40, b"\x00\x01garbage" * 500],
    ids=["text", "binary"],
)
async def test_file_that_is_not_sqlite_is_refused_and_untouched(tmp_path, content):
    path = tmp_path / "notes.db"
    path.write_bytes(content)
    before = digest(path)
    with pytest.raises(InvalidDatabaseError, match="pas une base SQLite"):
        SqliteSessionService(path)
    assert digest(path) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.db"]


async def test_tables_without_expected_columns_are_refused_and_untouched(tmp_path):
    path = tmp_path / "autre.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE events (id TEXT PRIMARY KEY, data TEXT)")
        conn.execute("INSERT INTO events VALUES ('e1', 'à garder')")
    conn.close()
    before = digest(path)
    service = SqliteSessionService(path)
    with pytest.raises(InvalidDatabaseError, match="event_data"):
        await service.list_sessions(app_name=APP)
    await service.close()
    assert digest(path) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["autre.db"]
    assert sql(path, "SELECT name FROM sqlite_master") == [
        ("events",),
        ("sqlite_autoindex_events_1",),
    ]


async def test_read_only_file_reads_but_refuses_writes_and_stays_untouched(tmp_path):
    path = tmp_path / "archive.db"
    await make_db(path, sessions=2)
    path.chmod(0o444)
    before = digest(path)
    async with SqliteSessionService(path) as service:
        listed = await service.list_sessions(app_name=APP, user_id="alice")
        assert len(listed.sessions) == 2 and service.read_only
        full = await service.get_session(
            app_name=APP, user_id="alice", session_id=listed.sessions[0].id
        )
        assert len(full.events) == 2
        with pytest.raises(ReadOnlyDatabaseError, match="lecture seule"):
            await service.create_session(app_name=APP, user_id="bob")
        with pytest.raises(ReadOnlyDatabaseError):
            await service.append_event(session=full, event=say("x"))
        with pytest.raises(ReadOnlyDatabaseError):
            await service.delete_session(app_name=APP, user_id="alice", session_id=full.id)
    assert digest(path) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["archive.db"]


# What the worker imports from site-packages, listed by a fresh process (as the worker would).
_LIST_THIRD_PARTY = """
import os, sys
import course.sessions, helpers
roots = [os.path.realpath(p) for p in sys.path if os.path.basename(p) == "site-packages"]
found = set()
for module in list(sys.modules.values()):
    path = os.path.realpath(getattr(module, "__file__", None) or "/")
    for root in roots:
        if path.startswith(root + os.sep):
            found.add(os.path.join(root, os.path.relpath(path, root).split(os.sep)[0]))
print("\\n".join(sorted(found)))
"""


@dataclass
class Runtime:
    """A Python a Unix user can run and, in a folder any user can read, copies of everything
    the worker imports: the checkout's ``course``, the tests' helpers and the site-packages
    modules they use."""

    python: str
    folder: Path

    @property
    def env(self) -> dict[str, str]:
        return {"PYTHONPATH": str(self.folder), "PYTHONDONTWRITEBYTECODE": "1"}


def _runs_as(user: str, python: str) -> tuple[int, int] | None:
    """The (major, minor) version of ``python`` when ``user`` can run it, else None."""
    try:
        done = subprocess.run(
            [python, "-c", "import sys; print(*sys.version_info[:2])"],
            user=user,
            cwd="/",
            env={},
            capture_output=True,
            text=True,
            timeout=60,
        )
    except OSError:  # not executable by that user (a folder on its path is private)
        return None
    return tuple(map(int, done.stdout.split())) if done.returncode == 0 else None


@pytest.fixture(scope="module")
def runtime_for_nobody() -> Iterator[Runtime]:
    """What user ``nobody`` needs to run the worker, whatever folder holds this checkout: its
    own files are copied to a readable folder, since a checkout in a private (0700) folder, or
    a venv built on root's own Python, cannot be read by another user."""
    if os.geteuid() != 0:
        pytest.skip("needs root to run a child as another user")
    wanted = sys.version_info[:2]  # the copied compiled modules are built for it
    candidates = (os.path.realpath(sys.executable), "/usr/bin/python3", "/usr/local/bin/python3")
    python = next((c for c in candidates if _runs_as("nobody", c) == wanted), None)
    if python is None:
        pytest.skip(f"no Python {wanted[0]}.{wanted[1]} that user 'nobody' can run")
    folder = Path(tempfile.mkdtemp(prefix="course-runtime-", dir="/tmp"))
    try:
        listed = subprocess.run(
            [sys.executable, "-c", _LIST_THIRD_PARTY],
            env={**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "tests"), str(REPO)])},
            capture_output=True,
            text=True,
            check=True,
            timeout=120,
        ).stdout.split()
        ignore = shutil.ignore_patterns("__pycache__")
        for source in [*map(Path, listed), REPO / "course"]:
            if source.is_dir():
                shutil.copytree(source, folder / source.name, ignore=ignore)
            else:
                shutil.copy2(source, folder)
        for name in ("helpers.py", "sessions/session_worker.py"):
            shutil.copy2(REPO / "tests" / name, folder)
        for place in [folder, *folder.rglob("*")]:
            place.chmod(place.stat().st_mode | (0o555 if place.is_dir() else 0o444))
        yield Runtime(python, folder)
    finally:
        shutil.rmtree(folder)


@pytest.mark.parametrize(
    "file_mode", [0o644, 0o666], ids=["file-not-writable", "folder-not-writable"]
)
async def test_file_a_real_user_cannot_write_reads_but_refuses_writes(
    children, runtime_for_nobody, file_mode
):
    folder = Path(tempfile.mkdtemp(prefix="course-ro-", dir="/tmp"))
    try:
        folder.chmod(0o755)
        path = folder / "tuteur.db"
        await make_db(path, sessions=3)
        path.chmod(file_mode)
        before = digest(path)
        child = children(
            "readonly",
            str(path),
            python=runtime_for_nobody.python,
            script=runtime_for_nobody.folder / "session_worker.py",
            user="nobody",
            cwd="/",
            env=runtime_for_nobody.env,
        )
        assert child.next_line() == "read 3 read_only=True"
        refused = child.next_line()
        assert refused.startswith("refused ReadOnlyDatabaseError") and "lecture seule" in refused
        assert child.proc.wait(timeout=30) == 0
        assert digest(path) == before
        assert sorted(p.name for p in folder.iterdir()) == ["tuteur.db"]
    finally:
        shutil.rmtree(folder)


async def test_bad_calls_leave_the_file_byte_for_byte_unchanged(tmp_path):
    path = tmp_path / "tuteur.db"
    (session_id,) = await make_db(path)
    before = digest(path)
    async with SqliteSessionService(path) as service:
        session = await service.get_session(app_name=APP, user_id="alice", session_id=session_id)
        stale = session.model_copy(deep=True)
        stale.last_update_time -= 10
        json_state = "L'état initial \\(state\\) doit pouvoir s'écrire en JSON"
        bad_calls = [
            (service.create_session(app_name="", user_id="alice"), "app_name ne doit pas"),
            (service.create_session(app_name=APP, user_id=" "), "user_id ne doit pas être vide"),
            (
                service.create_session(app_name=APP, user_id=["alice"]),
                "user_id doit être une chaîne de caractères \\(str\\), pas list",
            ),
            (
                service.create_session(app_name=APP, user_id="bob", session_id=12),
                "session_id doit être une chaîne de caractères \\(str\\) ou None, pas int",
            ),
            (
                service.create_session(app_name=APP, user_id="bob", state={"user:x": object()}),
                json_state,
            ),
            (
                service.create_session(app_name=APP, user_id="bob", state={"x": float("nan")}),
                json_state,
            ),
            (
                service.create_session(app_name=APP, user_id="bob", state=["pas", "un", "dict"]),
                "doit être un dictionnaire \\(dict\\), pas list",
            ),
            (
                service.create_session(app_name=APP, user_id="alice", session_id=session_id),
                f"La session '{session_id}' existe déjà",
                AlreadyExistsError,
            ),
            (
                service.get_session(app_name=APP, user_id=None, session_id=session_id),
                "user_id doit être une chaîne de caractères \\(str\\), pas NoneType",
            ),
            (service.list_sessions(app_name=APP, user_id=""), "user_id ne doit pas être vide"),
            (
                service.delete_session(app_name=APP, user_id="alice", session_id=""),
                "session_id ne doit pas être vide",
            ),
            (
                service.list_events(app_name=APP, user_id="alice", session_id=session_id, limit=-1),
                "limit doit être un entier positif ou nul, pas -1",
            ),
            (
                service.append_event(session=stale, event=say("en retard")),
                "modifiée ailleurs depuis sa lecture",
                StaleSessionError,
            ),
            (
                service.append_event(session=session, event=session.events[0]),
                f"L'événement '{session.events[0].id}' est déjà enregistré",
                DuplicateEventError,
            ),
            (
                service.append_event(session="pas une session", event=say("x")),
                "session doit être une Session de course.sessions, pas str",
            ),
        ]
        for call, words, *error in bad_calls:
            with pytest.raises(error[0] if error else InvalidArgumentError, match=words):
                await call
        assert (
            session.last_update_time
            == (
                await service.get_session(app_name=APP, user_id="alice", session_id=session_id)
            ).last_update_time
        )
    assert digest(path) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tuteur.db"]


async def test_error_messages_are_french(tmp_path):
    async with SqliteSessionService(tmp_path / "x.db") as service:
        for call, words in [
            (service.create_session(app_name="", user_id="a"), "ne doit pas être vide"),
            (service.create_session(app_name="a", user_id=3), "doit être une chaîne"),
            (
                service.create_session(app_name="a", user_id="b", state={"f": print}),
                "JSON",
            ),
        ]:
            with pytest.raises(ValueError, match=words):
                await call


async def test_a_state_row_that_is_not_json_gets_a_clear_error(tmp_path):
    path = tmp_path / "tuteur.db"
    (session_id,) = await make_db(path)
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE user_states SET state = '{pas du json'")
    conn.close()
    async with SqliteSessionService(path) as service:
        with pytest.raises(InvalidDatabaseError, match="illisible dans la table user_states"):
            await service.get_session(app_name=APP, user_id="alice", session_id=session_id)
        with pytest.raises(InvalidDatabaseError, match="user_states"):
            await service.list_sessions(app_name=APP)
