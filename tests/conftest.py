"""Fixtures shared by the tests of every package (plain helpers are in ``tests/helpers.py``)."""

from __future__ import annotations

import itertools
import json
import os
import signal
import sqlite3
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import run_cache
from helpers import REPO, SERVER_KINDS, SERVICE_KINDS, STORAGE, Backend, close_service, make_backend
from learner_env import learner_python
from work_units import pytest_collection_modifyitems, pytest_xdist_make_scheduler  # noqa: F401

from course.sessions._schema import (
    APP_STATES_TABLE_SCHEMA,
    EVENTS_TABLE_SCHEMA,
    SESSIONS_TABLE_SCHEMA,
    USER_STATES_TABLE_SCHEMA,
)


def pytest_terminal_summary(terminalreporter) -> None:
    """The Python the lessons and the TPs' grading ran on (tests/learner_env.py), at the end of
    the run's log (quiet runs included): the newest the machine has, not always the test set's."""
    terminalreporter.write_line(f"lessons and TPs on: {learner_python()}")


@pytest.fixture(autouse=True, scope="session")
def gradebook_stamp_in_process() -> None:
    """The gradebooks the tests create here are stamped as the class tools stamp theirs
    (grading.classroom.schema_stamp), not by an ``alembic`` command each (1 s of CPU)."""
    from grading.classroom.schema_stamp import stamp_in_process

    stamp_in_process()


_UMASK = os.umask(0o022)  # the test process's own, read once
os.umask(_UMASK)


@pytest.fixture(autouse=True)
def test_process_umask() -> Iterator[None]:
    """Every test starts with the test process's umask: the course's nbgrader_config.py sets
    0o077 (grades are private files) in any process that reads it, tests included."""
    os.umask(_UMASK)
    yield
    os.umask(_UMASK)


@pytest.fixture(scope="session", autouse=True)
def run_cache_folder(tmp_path_factory) -> Path:
    """Where the run keeps what its tests build once for every worker (run_cache): the
    generated course, the graded class, the executed lessons, the graded sample answers."""
    return run_cache.configure(tmp_path_factory)


@pytest.fixture(scope="session", autouse=True)
def course_prefix_released() -> Iterator[None]:
    """At the end of the session, this process stops using the hub tests' course environment
    if a grading test used it (tests/hub/course_prefix.py: the last user tidies up)."""
    yield
    prefix = sys.modules.get("course_prefix")
    if prefix is not None:
        prefix.release()


@pytest.fixture(autouse=True, scope="session")
def progress_default(tmp_path_factory) -> None:
    """What the session's servers and kernels record, before any test sets its own file: a file
    of the run, never the tester's home (course.progress)."""
    os.environ["COURS_PROGRES_DB"] = str(tmp_path_factory.mktemp("progres") / "progres.db")


@pytest.fixture(autouse=True)
def progress_file(tmp_path_factory, monkeypatch) -> Path:
    """Each test, and every kernel or process it starts, records the learner's progress in a
    file of its own (course.progress), never in the tester's home."""
    path = tmp_path_factory.mktemp("progres") / "progres.db"
    monkeypatch.setenv("COURS_PROGRES_DB", str(path))
    progress = sys.modules.get("course.progress")
    if progress is not None:
        progress.reset_cache()
    return path


@pytest.fixture(scope="session")
def sample_answers() -> dict[str, str]:
    """The TP's sample submissions (grader/submissions/<name>.py): name -> `oublier` cell text."""
    folder = REPO / "grader" / "submissions"
    return {p.stem: p.read_text(encoding="utf-8") for p in sorted(folder.glob("*.py"))}


@pytest.fixture(scope="session")
def expected_scores() -> dict[str, dict]:
    """Each sample submission's expected score and failed tests (grader/submissions)."""
    return json.loads((REPO / "grader" / "submissions" / "attendus.json").read_text("utf-8"))


@pytest.fixture
def sqlite_db_path(tmp_path: Path) -> Path:
    """Where a test's tutor database lives (not created yet)."""
    return tmp_path / "tuteur.db"


# -- the session services: one family ----------------------------------------------------------
# ``backend`` is each of the four services (helpers.SERVICE_KINDS) with its classes;
# ``session_service`` is its service, ``second_service`` a second instance on the same storage
# (``Backend.again``), ``backend_factory``/``service_factory`` build more inside a test. Every
# service made here is closed at teardown, even when the test fails.


@pytest.fixture(scope="session")
def postgres_cluster() -> Iterator[Any]:
    """One private PostgreSQL for the whole run (course.postgres), started on first use, in a
    folder an ordinary user can reach (as root, the server runs as ``nobody``)."""
    import shutil
    import tempfile

    from course.postgres import ServeurPostgres

    base = Path(tempfile.mkdtemp(prefix="pg-tests-"))
    base.chmod(0o777)
    try:
        with ServeurPostgres(base / "cluster", durable=False) as server:
            yield server
    finally:
        shutil.rmtree(base, ignore_errors=True)


_databases = itertools.count()


@pytest.fixture
async def backend_factory(
    tmp_path: Path, request: pytest.FixtureRequest
) -> AsyncIterator[Callable[..., Backend]]:
    """``make(kind, db_path=None)``: a fresh Backend (a file kind on ``db_path``, else on a
    new file of its own; a server kind on a fresh database of the session's server)."""
    made: list[Any] = []

    def make(kind: str, db_path: Path | None = None) -> Backend:
        if STORAGE.get(kind) == "server":
            cluster = request.getfixturevalue("postgres_cluster")
            url = cluster.creer_base(f"t{os.getpid()}_{next(_databases)}")
            backend = make_backend(kind, None, url)
            made.append(backend.service)
            return backend
        if db_path is None:
            db_path = tmp_path / f"{kind}-{len(made)}.db"
        backend = make_backend(kind, db_path)
        made.append(backend.service)
        return backend

    try:
        yield make
    finally:
        for service in made:
            await close_service(service)


def pytest_configure(config: pytest.Config) -> None:
    """Ctrl-C (SIGINT) at its default in the run and every process it starts, as a terminal or
    systemd gives it. A run started in the background (`make test &`, a CI step) inherits SIGINT
    ignored, Python then leaves it ignored, and so does every child: the tutor's Ctrl-C tests
    waited 60 s for a message and failed, and a test hub's managed services (roster sync, idle
    culler), stopped by SIGINT first, took 10 s each to stop, so a hub stopped with a 30 s grace
    was killed before its cleanup and left its roster sync running (both seen in full runs)."""
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """``backend`` runs on the four services; a module that sets ``ALSO_ON_SERVERS = True``
    runs on the server kinds too (helpers.SERVER_KINDS). A test that parametrizes ``backend``
    itself keeps its own list."""
    if "backend" not in metafunc.fixturenames:
        return
    for mark in metafunc.definition.iter_markers("parametrize"):
        names = mark.args[0]
        if "backend" in (names.replace(" ", "").split(",") if isinstance(names, str) else names):
            return
    kinds = SERVICE_KINDS
    if getattr(metafunc.module, "ALSO_ON_SERVERS", False):
        kinds = SERVICE_KINDS + SERVER_KINDS
    metafunc.parametrize("backend", kinds, indirect=True)


@pytest.fixture
def backend(
    request: pytest.FixtureRequest, backend_factory: Callable[..., Backend], sqlite_db_path: Path
) -> Backend:
    """Each of the four session services, fresh (a file kind on ``sqlite_db_path``)."""
    return backend_factory(request.param, sqlite_db_path)


@pytest.fixture
def session_service(backend: Backend) -> Any:
    """Each of the four session services, fresh, closed after the test."""
    return backend.service


@pytest.fixture
async def second_service(backend: Backend) -> AsyncIterator[Any]:
    """A second instance of ``backend``'s service on the same storage: a new service object on
    the same file; for an in-memory kind, whose store lives in its object, that object."""
    other = backend.again()
    try:
        yield other
    finally:
        if other is not backend.service:
            await close_service(other)


@pytest.fixture
def service_factory(backend_factory: Callable[..., Backend]) -> Callable[[str, Path | None], Any]:
    """``make(kind, db_path)``: a fresh service, closed at teardown even if the test fails."""
    return lambda kind, db_path=None: backend_factory(kind, db_path).service


ADK_TABLES = (
    APP_STATES_TABLE_SCHEMA,
    USER_STATES_TABLE_SCHEMA,
    SESSIONS_TABLE_SCHEMA,
    EVENTS_TABLE_SCHEMA,
)


@pytest.fixture
def cli_env(tmp_path: Path) -> dict[str, str]:
    """Environment for the course's command lines (the tutor, the inspector): the checkout's
    ``course`` importable, no TUTEUR_DB unless a test sets it."""
    env = {k: v for k, v in os.environ.items() if k != "TUTEUR_DB"}
    env["PYTHONPATH"] = str(REPO)
    env["PYTHONUNBUFFERED"] = "1"
    env["LANG"] = env["LC_ALL"] = "C.UTF-8"
    return env


@pytest.fixture
def python() -> str:
    """The Python that runs the tests (its venv has everything the course needs)."""
    return sys.executable


def _event(author: str, parts: list[dict], delta: dict | None = None) -> dict:
    role = "user" if author == "user" else "model"
    data: dict = {"author": author, "content": {"role": role, "parts": parts}}
    if delta:
        data["actions"] = {"state_delta": delta}
    return data


ALICE_EVENTS = [
    _event("user", [{"text": "Bonjour ; je veux réviser #python <b>"}]),
    _event(
        "tuteur",
        [{"function_call": {"id": "c1", "name": "enregistrer_reponse", "args": {"juste": True}}}],
    ),
    _event(
        "tuteur",
        [
            {
                "function_response": {
                    "id": "c1",
                    "name": "enregistrer_reponse",
                    "response": {"niveau": 2},
                }
            }
        ],
        {"user:progression": {"python": {"niveau": 2}}},
    ),
    _event("tuteur", [{"text": "Bravo ! Vous passez au niveau 2."}]),
]


@pytest.fixture
def adk_format_db(sqlite_db_path: Path) -> Path:
    """A real SQLite file as google-adk 2.10 writes it (its four tables, none of the course's
    indexes), filled by plain SQL: alice (1 session, 4 events), bob (1 empty session)."""
    conn = sqlite3.connect(sqlite_db_path)
    for table in ADK_TABLES:
        conn.execute(table)
    conn.execute(
        "INSERT INTO user_states VALUES ('tuteur', 'alice', ?, 1.0)",
        (json.dumps({"progression": {"python": {"niveau": 2}}}),),
    )
    conn.execute("INSERT INTO sessions VALUES ('tuteur', 'alice', 's-alice', '{}', 1.0, 5.0)")
    conn.execute("INSERT INTO sessions VALUES ('tuteur', 'bob', 's-bob', '{}', 2.0, 2.0)")
    for i, event in enumerate(ALICE_EVENTS, start=1):
        conn.execute(
            "INSERT INTO events VALUES (?, 'tuteur', 'alice', 's-alice', 'inv', ?, ?)",
            (f"e{i}", float(i), json.dumps(event, ensure_ascii=False)),
        )
    conn.commit()
    conn.close()
    return sqlite_db_path
