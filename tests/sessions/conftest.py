"""Fixtures of the session-service tests: one backend fixture over four services.

``backend`` runs a test against the course's two services and, as the reference, google-adk
2.10's two (``helpers.SERVICE_KINDS``, built by ``helpers.make_service``). Each backend brings
the model classes its service expects (course.events or google.adk/google.genai), so one test
body serves all four.
"""

from __future__ import annotations

import dataclasses
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from helpers import SERVICE_KINDS, close_service, make_service

from course import events as course_events
from course import sessions as course_sessions


@dataclasses.dataclass
class Backend:
    """A session service plus the classes and errors that go with it."""

    name: str
    service: Any
    Event: Any
    EventActions: Any
    Content: Any
    Part: Any
    FunctionCall: Any
    FunctionResponse: Any
    GetSessionConfig: Any
    AlreadyExistsError: type[BaseException]
    SessionNotFoundError: type[BaseException]
    StaleSessionError: type[BaseException]
    db_path: Path | None

    @property
    def is_adk(self) -> bool:
        return self.name.startswith("adk")

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
        """Read the file directly (SQLite backends only)."""
        assert self.db_path is not None
        with sqlite3.connect(self.db_path) as conn:
            return conn.execute(query, params).fetchall()


def make_backend(name: str, tmp_path: Path, db_path: Path | None = None) -> Backend:
    """A fresh backend by name; SQLite ones on ``db_path`` (default: a file in tmp_path)."""
    if not name.endswith("sqlite"):
        db_path = None
    elif db_path is None:
        db_path = tmp_path / f"{name}.db"
    service = make_service(name, db_path)
    if name.startswith("course"):
        return Backend(
            name,
            service,
            course_events.Event,
            course_events.EventActions,
            course_events.Content,
            course_events.Part,
            course_events.FunctionCall,
            course_events.FunctionResponse,
            course_sessions.GetSessionConfig,
            course_sessions.AlreadyExistsError,
            course_sessions.SessionNotFoundError,
            course_sessions.StaleSessionError,
            db_path,
        )
    from google.adk.errors._stale_session_error import StaleSessionError
    from google.adk.errors.already_exists_error import AlreadyExistsError
    from google.adk.errors.session_not_found_error import SessionNotFoundError
    from google.adk.events import Event, EventActions
    from google.adk.sessions.base_session_service import GetSessionConfig
    from google.genai import types

    return Backend(
        name,
        service,
        Event,
        EventActions,
        types.Content,
        types.Part,
        types.FunctionCall,
        types.FunctionResponse,
        GetSessionConfig,
        AlreadyExistsError,
        SessionNotFoundError,
        StaleSessionError,
        db_path,
    )


@pytest.fixture(params=SERVICE_KINDS)
async def backend(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Backend]:
    """Each of the four session services, fresh, on its own file when it has one."""
    made = make_backend(request.param, tmp_path)
    yield made
    await close_service(made.service)


@pytest.fixture
def backend_maker():
    """``make_backend(name, tmp_path, db_path=None)``: build a backend inside a test."""
    return make_backend


@pytest.fixture
def adk_does_worse(request: pytest.FixtureRequest, backend: Backend):
    """Call it with a reason (and optionally backend names) to mark this test as an expected,
    strict failure for ADK's services: the course does better there."""

    def mark(reason: str, *names: str) -> None:
        if backend.is_adk and (not names or backend.name in names):
            request.applymarker(pytest.mark.xfail(strict=True, reason=reason))

    return mark


@pytest.fixture
async def second_service(backend: Backend, tmp_path: Path) -> AsyncIterator[Any]:
    """Another service instance on the same storage: same file, or the same in-memory object."""
    if backend.db_path is None:
        yield backend.service
        return
    other = make_backend(backend.name, tmp_path).service
    yield other
    await close_service(other)


@pytest.fixture
async def sqlite_service(tmp_path: Path) -> AsyncIterator[course_sessions.SqliteSessionService]:
    """The course's SQLite service on a fresh file, closed after the test."""
    service = course_sessions.SqliteSessionService(tmp_path / "tuteur.db")
    yield service
    await service.close()
