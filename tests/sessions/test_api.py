"""The public API: names exported, models, basic round trip through each course backend."""

from __future__ import annotations

import json

import pytest

from course import events, sessions
from course.events import Content, Event, EventActions, FunctionCall, FunctionResponse, Part
from course.sessions import InMemorySessionService, SqliteSessionService


def test_exports_name_every_class_of_the_contract():
    for name in [
        "BaseSessionService",
        "InMemorySessionService",
        "SqliteSessionService",
        "Session",
        "GetSessionConfig",
        "ListSessionsResponse",
        "AlreadyExistsError",
        "SessionNotFoundError",
        "StaleSessionError",
    ]:
        assert name in sessions.__all__ and hasattr(sessions, name)
    for name in ["Event", "EventActions", "Content", "Part", "FunctionCall", "FunctionResponse"]:
        assert name in events.__all__ and hasattr(events, name)


def test_errors_keep_adk_bases():
    assert not issubclass(sessions.AlreadyExistsError, ValueError)
    assert issubclass(sessions.SessionNotFoundError, ValueError)
    assert issubclass(sessions.StaleSessionError, ValueError)
    for error in (
        sessions.InvalidArgumentError,
        sessions.InvalidDatabaseError,
        sessions.ReadOnlyDatabaseError,
        sessions.DuplicateEventError,
    ):
        assert issubclass(error, ValueError)


def test_no_one_call_erase_method():
    for cls in (InMemorySessionService, SqliteSessionService, sessions.BaseSessionService):
        names = [n.lower() for n in dir(cls)]
        assert not [n for n in names if "user" in n and ("delete" in n or "erase" in n)]
        assert "oublier" not in names


def test_service_constructor_does_no_io(tmp_path):
    path = tmp_path / "tuteur.db"
    service = SqliteSessionService(path)
    assert service.db_path == path
    assert not path.exists()


async def test_sqlite_round_trip_with_tool_calls(sqlite_service):
    session = await sqlite_service.create_session(
        app_name="tuteur", user_id="alice", state={"user:progression": {"niveau": 1}}
    )
    call = Event(
        author="tuteur",
        invocation_id="inv-1",
        content=Content(
            role="model",
            parts=[Part(function_call=FunctionCall(id="c1", name="noter", args={"ok": True}))],
        ),
    )
    answer = Event(
        author="tuteur",
        invocation_id="inv-1",
        content=Content(
            role="user",
            parts=[
                Part(
                    function_response=FunctionResponse(
                        id="c1", name="noter", response={"niveau": 2}
                    )
                )
            ],
        ),
        actions=EventActions(state_delta={"user:progression": {"niveau": 2}}),
    )
    for event in (call, answer):
        await sqlite_service.append_event(session=session, event=event)
    again = await sqlite_service.get_session(
        app_name="tuteur", user_id="alice", session_id=session.id
    )
    assert [e.id for e in again.events] == [call.id, answer.id]
    assert again.events[0].get_function_calls()[0].args == {"ok": True}
    assert again.events[1].get_function_responses()[0].response == {"niveau": 2}
    assert again.state["user:progression"] == {"niveau": 2}
    rows = sqlite_service_rows(sqlite_service.db_path, "SELECT state FROM user_states")
    assert json.loads(rows[0][0]) == {"progression": {"niveau": 2}}


def sqlite_service_rows(path, query):
    import sqlite3

    with sqlite3.connect(path) as conn:
        return conn.execute(query).fetchall()


async def test_an_adk_event_is_accepted_by_its_json(sqlite_service):
    from google.adk.events import Event as AdkEvent
    from google.genai import types

    session = await sqlite_service.create_session(app_name="tuteur", user_id="alice")
    adk_event = AdkEvent(
        author="user",
        invocation_id="i",
        content=types.Content(role="user", parts=[types.Part(text="Bonjour")]),
    )
    # as with ADK, the event given is the one returned (and appended to the session)...
    assert await sqlite_service.append_event(session=session, event=adk_event) is adk_event
    # ...and what is read back is the course's Event, with the very same JSON
    again = await sqlite_service.get_session(
        app_name="tuteur", user_id="alice", session_id=session.id
    )
    [stored] = again.events
    assert isinstance(stored, Event) and stored.id == adk_event.id
    assert stored.model_dump_json(exclude_none=True) == adk_event.model_dump_json(exclude_none=True)
    with pytest.raises(ValueError, match="Event de course.events"):
        await sqlite_service.append_event(session=session, event={"author": "user"})
