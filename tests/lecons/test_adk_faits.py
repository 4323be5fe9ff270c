"""What the lessons say about google-adk 2.10, checked against google-adk 2.10 itself.

google-adk 2.10 is part of the course's runtime set (the ADK appendix runs it for every
learner); every sentence of a lesson or of the appendix about what ADK does, or does
differently, is one of the facts below, measured here on real files.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from google.adk.sessions.sqlite_session_service import SqliteSessionService as AdkService

from course.sessions import SqliteSessionService as CourseService
from course.tuteur import APP_NAME, demo


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


def test_where_a_learner_imports_adk_s_names():
    """The appendix's table: the course's names and what a learner imports from ADK instead."""
    import inspect

    import google.adk.sessions as sessions
    from google.adk.agents import Agent, LlmAgent
    from google.adk.events import Event, EventActions
    from google.adk.runners import Runner
    from google.adk.sessions import InMemorySessionService
    from google.adk.sessions.base_session_service import GetSessionConfig
    from google.genai import types

    with pytest.raises(ImportError, match="GetSessionConfig"):
        from google.adk.sessions import GetSessionConfig as _  # noqa: F401
    with pytest.raises(ImportError, match="SqliteSessionService"):
        from google.adk.sessions import SqliteSessionService as _  # noqa: F401, F811
    assert GetSessionConfig.__module__ == "google.adk.sessions.base_session_service"
    assert InMemorySessionService.__name__ == "InMemorySessionService" and "Session" in dir(
        sessions
    )
    assert Agent is LlmAgent
    assert "model" in LlmAgent.model_fields  # it answers with the model this field names
    assert {"agent", "app_name", "session_service"} <= set(inspect.signature(Runner).parameters)
    run_async = inspect.signature(Runner.run_async).parameters
    assert {"user_id", "session_id", "new_message"} <= set(run_async)
    assert all(run_async[n].kind is inspect.Parameter.KEYWORD_ONLY for n in ("user_id",))
    assert "types.Content" in str(run_async["new_message"].annotation)
    content = types.Content(role="user", parts=[types.Part(text="Bonjour")])
    event = Event(author="user", invocation_id="i", content=content, actions=EventActions())
    assert event.content.parts[0].text == "Bonjour"
    # the course's own names are not ADK's: its Runner, Tuteur and message() live in course
    import course.tuteur

    assert course.tuteur.Runner is not Runner
    assert type(course.tuteur.message("Bonjour")).__module__.startswith("course.")


async def test_accents_escaped_by_create_session_then_utf8_after_a_state_delta(tmp_path: Path):
    """create_session writes state with json.dumps (\\u00e9); append_event merges a delta in SQL
    (json_each, json_group_object) and rewrites the rows it touches in plain UTF-8."""
    db = tmp_path / "a.db"
    service = AdkService(str(db))
    session = await service.create_session(
        app_name=APP_NAME, user_id="chloé", state={"nom": "Chloé", "user:prenom": "Chloé"}
    )

    def rows() -> tuple[str, str]:
        c = sqlite3.connect(db)
        try:
            return (
                c.execute("SELECT state FROM sessions").fetchone()[0],
                c.execute("SELECT state FROM user_states").fetchone()[0],
            )
        finally:
            c.close()

    assert rows() == ('{"nom": "Chlo\\u00e9"}', '{"prenom": "Chlo\\u00e9"}')
    await service.append_event(session, adk_event("user", "Bonjour"))  # no delta: no rewrite
    assert rows() == ('{"nom": "Chlo\\u00e9"}', '{"prenom": "Chlo\\u00e9"}')
    session = await service.get_session(app_name=APP_NAME, user_id="chloé", session_id=session.id)
    await service.append_event(session, adk_event("system", delta={"etape": "début"}))
    # the session's row is merged in SQL, in UTF-8; user_states, untouched, keeps its escapes
    assert rows() == ('{"etape":"début","nom":"Chloé"}', '{"prenom": "Chlo\\u00e9"}')
    session = await service.get_session(app_name=APP_NAME, user_id="chloé", session_id=session.id)
    await service.append_event(session, adk_event("system", delta={"user:niveau": 2}))
    assert rows() == ('{"etape":"début","nom":"Chloé"}', '{"niveau":2,"prenom":"Chloé"}')
    import inspect

    merge = inspect.getsource(inspect.getmodule(AdkService))
    assert "json_each" in merge and "json_group_object" in merge  # the merge is SQL's


async def test_list_sessions_loads_no_event(tmp_path: Path):
    service = AdkService(str(tmp_path / "a.db"))
    session = await service.create_session(app_name=APP_NAME, user_id="alice")
    await service.append_event(session, adk_event("user", "Bonjour"))
    (listed,) = (await service.list_sessions(app_name=APP_NAME, user_id="alice")).sessions
    assert listed.events == []
    full = await service.get_session(app_name=APP_NAME, user_id="alice", session_id=session.id)
    assert len(full.events) == 1  # control: the event is there


def test_a_checkpoint_on_an_adk_file_does_nothing(tmp_path: Path):
    """PRAGMA wal_checkpoint(TRUNCATE) on a rollback-journal file: (0, -1, -1), no error, no
    file beside it; on a WAL file (the control) it answers with the pages it copied."""
    import asyncio

    db = tmp_path / "adk.db"
    asyncio.run(AdkService(str(db)).create_session(app_name=APP_NAME, user_id="bob"))
    c = sqlite3.connect(db)
    assert c.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
    assert c.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone() == (0, -1, -1)
    c.close()
    assert files(db) == ["adk.db"]
    c = sqlite3.connect(db)
    c.execute("PRAGMA journal_mode = WAL")
    c.execute("INSERT INTO app_states VALUES ('x', '{}', 0)")
    c.commit()
    busy, log, copied = c.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    c.close()
    assert busy == 0 and log >= 0 and copied >= 0


def test_adk_asks_for_its_migration_only_for_its_old_schema(tmp_path: Path):
    """The migration command is for ADK's old schema (events without event_data)."""
    old = tmp_path / "ancien.db"
    c = sqlite3.connect(old)
    c.execute("CREATE TABLE events (id TEXT, app_name TEXT, user_id TEXT, session_id TEXT)")
    c.close()
    with pytest.raises(RuntimeError, match="migrat"):
        AdkService(str(old))
    course_file = tmp_path / "cours.db"

    async def write() -> None:
        async with CourseService(course_file) as course:
            await demo(course)

    import asyncio

    asyncio.run(write())
    AdkService(str(course_file))  # control: the course's file needs no migration


async def test_the_course_service_turns_an_adk_file_to_wal_and_adk_still_reads_it(tmp_path: Path):
    db = tmp_path / "adk.db"
    adk = AdkService(str(db))
    await adk.create_session(app_name=APP_NAME, user_id="bob", state={"user:langue": "fr"})
    async with CourseService(db) as course:
        (session,) = (await course.list_sessions(app_name=APP_NAME, user_id="bob")).sessions
        assert await course.get_user_state(app_name=APP_NAME, user_id="bob") == {"langue": "fr"}
    c = sqlite3.connect(db)
    assert c.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    extra = "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL"
    assert c.execute(extra).fetchone()[0] > 0
    c.close()
    again = (await adk.list_sessions(app_name=APP_NAME, user_id="bob")).sessions
    assert [s.id for s in again] == [session.id]


def test_adk_runs_no_pragma_but_foreign_keys():
    """« ADK n'exécute aucun PRAGMA à part foreign_keys » (and a read of the columns)."""
    import inspect
    import re

    source = inspect.getsource(inspect.getmodule(AdkService))
    pragmas = set(re.findall(r"PRAGMA[ _]\w+(?: = \w+|\(\w+\))?", source))
    assert pragmas == {
        "PRAGMA foreign_keys = ON",
        "PRAGMA_FOREIGN_KEYS",
        "PRAGMA table_info(events)",
    }


async def test_each_adk_call_opens_and_closes_its_own_connection(tmp_path: Path, monkeypatch):
    """« chaque méthode ouvre puis ferme sa connexion »: one aiosqlite connection per call,
    and none left on the file once the calls are done (the real connections, counted)."""
    import aiosqlite
    import psutil

    db = tmp_path / "a.db"
    service = AdkService(str(db))  # a new file: no connection of the constructor's own
    opened = []
    real_connect = aiosqlite.connect

    def counting_connect(*args, **kwargs):
        opened.append(args[0] if args else kwargs.get("database"))
        return real_connect(*args, **kwargs)

    monkeypatch.setattr(aiosqlite, "connect", counting_connect)
    session = await service.create_session(app_name=APP_NAME, user_id="bob")
    await service.list_sessions(app_name=APP_NAME, user_id="bob")
    await service.get_session(app_name=APP_NAME, user_id="bob", session_id=session.id)
    assert len(opened) == 3

    def on_the_file() -> list[str]:
        return [f.path for f in psutil.Process().open_files() if f.path.startswith(str(db))]

    assert on_the_file() == []
    control = sqlite3.connect(db)  # control: an open connection is seen
    control.execute("SELECT count(*) FROM sessions").fetchone()
    assert on_the_file() == [str(db)]
    control.close()
