"""Fixtures for the tutor's tests: every session service the Runner must work with."""

from __future__ import annotations

import os
import sqlite3
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
SERVICE_KINDS = ["course-memoire", "course-sqlite", "adk-memoire", "adk-sqlite"]


def make_service(kind: str, db_path: Path) -> Any:
    """A fresh session service of one kind; the SQLite ones write to `db_path`."""
    if kind == "course-memoire":
        from course.sessions import InMemorySessionService

        return InMemorySessionService()
    if kind == "course-sqlite":
        from course.sessions import SqliteSessionService

        return SqliteSessionService(str(db_path))
    if kind == "adk-memoire":
        from google.adk.sessions import InMemorySessionService as AdkMemory

        return AdkMemory()
    if kind == "adk-sqlite":
        from google.adk.sessions.sqlite_session_service import SqliteSessionService as AdkSqlite

        return AdkSqlite(str(db_path))
    raise ValueError(kind)


async def close_service(service: Any) -> None:
    close = getattr(service, "close", None)
    if close is not None:
        await close()


@pytest.fixture
def sqlite_db_path(tmp_path: Path) -> Path:
    """Where a test's tutor database lives (not created yet)."""
    return tmp_path / "tuteur.db"


@pytest.fixture(params=SERVICE_KINDS)
async def session_service(
    request: pytest.FixtureRequest, sqlite_db_path: Path
) -> AsyncIterator[Any]:
    """Each of the four services the Runner must work with unchanged."""
    service = make_service(request.param, sqlite_db_path)
    try:
        yield service
    finally:
        await close_service(service)


@pytest.fixture
async def service_factory() -> AsyncIterator[Callable[[str, Path], Any]]:
    """make(kind, db_path) -> a fresh service, closed at teardown even if the test fails."""
    made: list[Any] = []

    def make(kind: str, db_path: Path) -> Any:
        service = make_service(kind, db_path)
        made.append(service)
        return service

    try:
        yield make
    finally:
        for service in made:
            await close_service(service)


@pytest.fixture(params=["course-sqlite", "adk-sqlite"])
def sqlite_service_kind(request: pytest.FixtureRequest) -> str:
    """The two services that write the ADK file format."""
    return request.param


@pytest.fixture
def cli_env(tmp_path: Path) -> dict[str, str]:
    """Environment for the tutor's command line: no TUTEUR_DB unless a test sets it."""
    env = {k: v for k, v in os.environ.items() if k != "TUTEUR_DB"}
    env["PYTHONPATH"] = str(REPO)
    env["PYTHONUNBUFFERED"] = "1"
    env["LANG"] = env["LC_ALL"] = "C.UTF-8"
    return env


@pytest.fixture
def python() -> str:
    return sys.executable


@pytest.fixture
def read_db() -> Callable[[Path], dict[str, Any]]:
    """Read a tutor file from this process with plain sqlite3 (what the learner would see)."""

    def read(path: Path) -> dict[str, Any]:
        con = sqlite3.connect(path)
        try:
            return {
                "user_states": con.execute(
                    "SELECT app_name, user_id, state FROM user_states"
                ).fetchall(),
                "sessions": con.execute("SELECT id FROM sessions ORDER BY create_time").fetchall(),
                "counts": dict(
                    con.execute("SELECT session_id, COUNT(*) FROM events GROUP BY session_id")
                ),
                "events": con.execute(
                    "SELECT session_id, event_data FROM events ORDER BY timestamp"
                ).fetchall(),
            }
        finally:
            con.close()

    return read
