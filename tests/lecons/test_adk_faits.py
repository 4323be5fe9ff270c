"""What the lessons say about google-adk 2.10, checked against google-adk 2.10 itself.

The lessons run without ADK (it is an optional extra); every sentence in them about what ADK
does differently is one of the facts below, measured here on real files.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from course.sessions import SqliteSessionService as CourseService
from course.tuteur import APP_NAME, demo

adk_sqlite = pytest.importorskip("google.adk.sessions.sqlite_session_service")
AdkService = adk_sqlite.SqliteSessionService


def files(path: Path) -> list[str]:
    return sorted(p.name for p in path.parent.glob(f"{path.name}*"))


def adk_event(author: str, text: str | None = None, delta: dict | None = None):
    from google.adk.events import Event, EventActions
    from google.genai import types

    content = types.Content(role="user", parts=[types.Part(text=text)]) if text else None
    return Event(
        author=author,
        invocation_id=f"inv-{author}",
        content=content,
        actions=EventActions(state_delta=delta or {}),
    )


def test_adk_exports_and_lacks_what_the_lessons_say(tmp_path: Path):
    import google.adk
    import google.adk.sessions as sessions

    assert google.adk.__version__ == "2.10.0"
    assert "SqliteSessionService" not in sessions.__all__  # import it from its module
    service = AdkService(str(tmp_path / "a.db"))
    for name in ("close", "__aenter__", "db_path", "list_events"):
        assert not hasattr(service, name), name
    assert service._db_path == str(tmp_path / "a.db")
    course = CourseService(tmp_path / "c.db")
    assert all(hasattr(course, n) for n in ("close", "__aenter__", "db_path", "list_events"))


async def test_a_file_created_by_adk_has_a_rollback_journal_and_no_extra_index(tmp_path: Path):
    db = tmp_path / "adk.db"
    service = AdkService(str(db))
    with pytest.raises(TypeError):
        async with service:  # type: ignore[attr-defined]
            pass
    session = await service.create_session(app_name=APP_NAME, user_id="bob")
    await service.append_event(session, adk_event("user", "Bonjour"))
    reader = sqlite3.connect(db)
    try:
        assert reader.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
        reader.execute("SELECT count(*) FROM events").fetchone()
        assert files(db) == ["adk.db"]  # no -wal even while a connection reads
        extra = reader.execute(
            "SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL"
        ).fetchall()
        assert extra == []
    finally:
        reader.close()
    course_db = tmp_path / "cours.db"
    async with CourseService(course_db) as course:  # control: the course's file has both
        await course.create_session(app_name=APP_NAME, user_id="bob")
        assert "cours.db-wal" in files(course_db)
    c = sqlite3.connect(course_db)
    extra = "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL"
    assert c.execute(extra).fetchone()[0] > 0
    c.close()


async def test_adk_keeps_the_wal_mode_of_a_course_file_and_its_pragmas(tmp_path: Path):
    db = tmp_path / "cours.db"
    async with CourseService(db) as course:
        await demo(course)
    service = AdkService(str(db))
    await service.create_session(app_name=APP_NAME, user_id="bob")
    c = sqlite3.connect(db)
    assert c.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    c.close()
    async with service._get_db_connection() as conn:
        timeout = await (await conn.execute("PRAGMA busy_timeout")).fetchone()
        foreign = await (await conn.execute("PRAGMA foreign_keys")).fetchone()
    assert tuple(timeout) == (5000,)  # Python's sqlite3 default (timeout=5.0), no PRAGMA of ADK
    assert tuple(foreign) == (1,)


async def test_adk_lists_by_last_update_and_reads_the_last_events(tmp_path: Path):
    from google.adk.sessions.base_session_service import GetSessionConfig

    service = AdkService(str(tmp_path / "a.db"))
    created = [await service.create_session(app_name=APP_NAME, user_id="bob") for _ in range(3)]
    for i, text in enumerate(("un", "deux", "trois")):
        await service.append_event(created[0], adk_event("user", text))
        created[0] = await service.get_session(
            app_name=APP_NAME, user_id="bob", session_id=created[0].id
        )
        assert len(created[0].events) == i + 1
    listed = (await service.list_sessions(app_name=APP_NAME, user_id="bob")).sessions
    assert [s.id for s in listed] == [created[1].id, created[2].id, created[0].id]
    last = await service.get_session(
        app_name=APP_NAME,
        user_id="bob",
        session_id=created[0].id,
        config=GetSessionConfig(num_recent_events=2),
    )
    assert [e.content.parts[0].text for e in last.events] == ["deux", "trois"]


async def test_adk_scopes_escapes_and_what_delete_session_leaves(tmp_path: Path):
    db = tmp_path / "a.db"
    service = AdkService(str(db))
    session = await service.create_session(
        app_name=APP_NAME,
        user_id="alice",
        state={"etape": "accueil", "user:a_revoir": "décorateurs", "temp:brouillon": "x"},
    )
    await service.append_event(session, adk_event("user", "les décorateurs"))
    c = sqlite3.connect(db)
    state = c.execute("SELECT state FROM user_states").fetchone()[0]
    event = c.execute("SELECT event_data FROM events").fetchone()[0]
    sessions_state = c.execute("SELECT state FROM sessions").fetchone()[0]
    c.close()
    assert "d\\u00e9corateurs" in state and "décorateurs" not in state  # json.dumps escapes
    assert "décorateurs" in event and "\\u00e9" not in event  # pydantic keeps UTF-8
    assert json.loads(sessions_state) == {"etape": "accueil"}  # temp: never stored
    assert "brouillon" not in sessions_state
    await service.delete_session(app_name=APP_NAME, user_id="alice", session_id=session.id)
    assert (await service.list_sessions(app_name=APP_NAME, user_id="alice")).sessions == []
    assert await service.get_user_state(app_name=APP_NAME, user_id="alice") == {
        "a_revoir": "décorateurs"
    }


async def test_adk_title_event_and_a_state_changed_in_memory_only(tmp_path: Path):
    service = AdkService(str(tmp_path / "a.db"))
    session = await service.create_session(app_name=APP_NAME, user_id="alice")
    await service.append_event(session, adk_event("user", "Bonjour"))
    session = await service.get_session(app_name=APP_NAME, user_id="alice", session_id=session.id)
    session.state["titre"] = "perdu"  # changes the object, not the file
    again = await service.get_session(app_name=APP_NAME, user_id="alice", session_id=session.id)
    assert "titre" not in again.state
    await service.append_event(again, adk_event("system", delta={"titre": "Révisions"}))
    titled = await service.get_session(app_name=APP_NAME, user_id="alice", session_id=session.id)
    assert titled.state["titre"] == "Révisions"
    assert [(e.author, e.content is None) for e in titled.events] == [
        ("user", False),
        ("system", True),
    ]
