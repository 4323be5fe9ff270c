"""Fixtures for the tutor's tests: a plain reader of its file (the session services and the
command line's environment come from the root conftest)."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest


@pytest.fixture(params=["course-sqlite", "adk-sqlite"])
def sqlite_service_kind(request: pytest.FixtureRequest) -> str:
    """The two services that write the ADK file format."""
    return request.param


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
