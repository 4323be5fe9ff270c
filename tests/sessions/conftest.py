"""Fixtures of the session-service tests (the services themselves are in tests/conftest.py:
``backend``, ``session_service``, ``second_service``, ``backend_factory``)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from helpers import Backend

from course import sessions as course_sessions


@pytest.fixture
def adk_does_worse(request: pytest.FixtureRequest, backend: Backend):
    """Call it with a reason (and optionally backend names) to mark this test as an expected,
    strict failure for ADK's services: the course does better there."""

    def mark(reason: str, *names: str) -> None:
        if backend.is_adk and (not names or backend.name in names):
            request.applymarker(pytest.mark.xfail(strict=True, reason=reason))

    return mark


@pytest.fixture
async def sqlite_service(tmp_path: Path) -> AsyncIterator[course_sessions.SqliteSessionService]:
    """The course's SQLite service on a fresh file, closed after the test."""
    service = course_sessions.SqliteSessionService(tmp_path / "tuteur.db")
    yield service
    await service.close()
