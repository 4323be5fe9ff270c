"""What the course's SQLite service does beyond ADK: one connection, WAL, index, paging, close."""

from __future__ import annotations

import asyncio
import sqlite3
import threading

import pytest
from helpers import LESSON_PROGRESSION, open_files_under, say

from course.sessions import (
    InMemorySessionService,
    InvalidDatabaseError,
    ServiceClosedError,
    SessionNotFoundError,
    SqliteSessionService,
)

APP = "tuteur"


async def sql_on_service_connection(service: SqliteSessionService, query: str):
    conn = await service._connection()
    return await conn.run(lambda db: db.execute(query).fetchall())


async def test_one_connection_with_pragmas(sqlite_service):
    await sqlite_service.create_session(app_name=APP, user_id="alice")
    first = await sqlite_service._connection()
    for _ in range(3):
        await sqlite_service.list_sessions(app_name=APP)
    assert await sqlite_service._connection() is first
    assert await sql_on_service_connection(sqlite_service, "PRAGMA foreign_keys") == [(1,)]
    assert await sql_on_service_connection(sqlite_service, "PRAGMA journal_mode") == [("wal",)]
    assert await sql_on_service_connection(sqlite_service, "PRAGMA busy_timeout") == [(5000,)]
    with sqlite3.connect(sqlite_service.db_path) as outside:
        assert outside.execute("PRAGMA journal_mode").fetchone() == ("wal",)


async def test_close_leaves_no_file_handle_and_no_thread(sqlite_db_path):
    threads_before = threading.active_count()
    service = SqliteSessionService(sqlite_db_path)
    session = await service.create_session(app_name=APP, user_id="alice")
    await service.append_event(session=session, event=say("Bonjour"))
    assert open_files_under(sqlite_db_path)
    await service.close()
    await service.close()  # twice is fine
    assert open_files_under(sqlite_db_path) == []
    assert threading.active_count() == threads_before
    with pytest.raises(ServiceClosedError, match="fermé") as closed:
        await service.list_sessions(app_name=APP)
    # a notebook shows one French line, not the service's frames (learner's walk, stop 59),
    # and says what a lesson's learner does; still a RuntimeError, as code may catch it
    assert closed.value._render_traceback_() == [f"ServiceClosedError\u00a0: {closed.value}"]
    assert "réexécutez-la depuis sa première cellule" in str(closed.value)
    assert isinstance(closed.value, RuntimeError)


async def test_async_with_closes_and_history_survives_a_new_service(sqlite_db_path):
    async with SqliteSessionService(sqlite_db_path) as service:
        session = await service.create_session(app_name=APP, user_id="alice")
        for i in range(3):
            await service.append_event(session=session, event=say(f"m{i}"))
    assert open_files_under(sqlite_db_path) == []
    async with SqliteSessionService(str(sqlite_db_path)) as reopened:
        again = await reopened.get_session(app_name=APP, user_id="alice", session_id=session.id)
        assert [e.content.parts[0].text for e in again.events] == ["m0", "m1", "m2"]


async def test_adk_style_sqlite_url_is_accepted(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    async with SqliteSessionService("sqlite:///url.db") as service:
        await service.create_session(app_name=APP, user_id="alice")
        assert service.db_path.name == "url.db"
    assert (tmp_path / "url.db").exists()


async def test_events_index_serves_reading_a_session_in_time_order(sqlite_service):
    await sqlite_service.create_session(app_name=APP, user_id="alice")
    plan = await sql_on_service_connection(
        sqlite_service,
        "EXPLAIN QUERY PLAN SELECT event_data FROM events WHERE app_name='a' AND user_id='u' "
        "AND session_id='s' ORDER BY timestamp, rowid LIMIT 10 OFFSET 5",
    )
    details = " ".join(row[-1] for row in plan)
    assert "idx_events_session_time" in details
    assert "TEMP B-TREE" not in details


async def test_list_sessions_never_reads_events(sqlite_service):
    session = await sqlite_service.create_session(app_name=APP, user_id="alice")
    for i in range(5):
        await sqlite_service.append_event(session=session, event=say(f"m{i}"))
    conn = await sqlite_service._connection()
    statements: list[str] = []
    await conn.run(lambda db: db.set_trace_callback(statements.append))
    listed = await sqlite_service.list_sessions(app_name=APP, user_id="alice")
    await sqlite_service.list_sessions(app_name=APP)
    await conn.run(lambda db: db.set_trace_callback(None))
    assert listed.sessions[0].events == []
    assert any("FROM sessions" in s for s in statements)
    assert not [s for s in statements if "events" in s.lower()]
    # and the trace does see events when they are read
    await conn.run(lambda db: db.set_trace_callback(statements.append))
    await sqlite_service.get_session(app_name=APP, user_id="alice", session_id=session.id)
    await conn.run(lambda db: db.set_trace_callback(None))
    assert [s for s in statements if "FROM events" in s]


@pytest.mark.parametrize(
    ("user_id", "index"), [("alice", "idx_sessions_user_time"), (None, "idx_sessions_time")]
)
async def test_list_sessions_reads_sessions_already_sorted_by_an_index(
    sqlite_service, user_id, index
):
    for _ in range(3):
        await sqlite_service.create_session(app_name=APP, user_id="alice")
    conn = await sqlite_service._connection()
    statements: list[str] = []
    await conn.run(lambda db: db.set_trace_callback(statements.append))
    await sqlite_service.list_sessions(app_name=APP, user_id=user_id)
    await conn.run(lambda db: db.set_trace_callback(None))
    (listing,) = [s for s in statements if "FROM sessions" in s]
    plan = " ".join(
        row[-1]
        for row in await sql_on_service_connection(sqlite_service, f"EXPLAIN QUERY PLAN {listing}")
    )
    assert f"COVERING INDEX {index}" in plan  # the sessions table itself is never read
    assert "TEMP B-TREE" not in plan


async def test_an_older_index_of_the_same_name_is_rebuilt_on_first_use(tmp_path):
    path = tmp_path / "ancien.db"
    async with SqliteSessionService(path) as service:
        await service.create_session(app_name=APP, user_id="alice", session_id="s")
    with sqlite3.connect(path) as conn:  # the definition of an earlier version of the course
        conn.execute("DROP INDEX idx_sessions_time")
        conn.execute("CREATE INDEX idx_sessions_time ON sessions (app_name, update_time, id)")
    conn.close()
    async with SqliteSessionService(path) as service:
        listed = await service.list_sessions(app_name=APP)
        assert [s.id for s in listed.sessions] == ["s"]
    with sqlite3.connect(path) as conn:
        columns = [row[2] for row in conn.execute("PRAGMA index_info(idx_sessions_time)")]
    conn.close()
    assert columns == ["app_name", "update_time", "user_id", "id", "state"]


@pytest.mark.parametrize("bad_state", ["{pas du json", "[1, 2]", '{"a": 1}, {"b": 2}', "", "null"])
async def test_a_session_state_that_is_not_a_json_object_gets_a_clear_error(tmp_path, bad_state):
    path = tmp_path / "tuteur.db"
    async with SqliteSessionService(path) as service:
        for n in range(3):
            await service.create_session(app_name=APP, user_id="alice", state={"n": n})
    with sqlite3.connect(path) as conn:
        conn.execute(
            "UPDATE sessions SET state = ? WHERE rowid = (SELECT min(rowid) FROM sessions)",
            (bad_state,),
        )
    conn.close()
    async with SqliteSessionService(path) as service:
        for user_id in ("alice", None):
            with pytest.raises(InvalidDatabaseError, match="table sessions"):
                await service.list_sessions(app_name=APP, user_id=user_id)


async def test_a_file_written_by_adk_gains_the_indexes_on_first_use(tmp_path):
    from google.adk.sessions.sqlite_session_service import SqliteSessionService as AdkService

    path = tmp_path / "adk.db"
    await AdkService(str(path)).create_session(app_name=APP, user_id="alice", session_id="s")
    async with SqliteSessionService(path) as service:
        listed = await service.list_sessions(app_name=APP, user_id="alice")
    assert [s.id for s in listed.sessions] == ["s"]
    with sqlite3.connect(path) as conn:
        names = {n for (n,) in conn.execute("SELECT name FROM sqlite_master WHERE type='index'")}
    conn.close()
    added = {n for n in names if not n.startswith("sqlite_autoindex_")}  # primary keys' own
    assert added == {"idx_events_session_time", "idx_sessions_user_time", "idx_sessions_time"}


@pytest.fixture(params=["memory", "sqlite"])
async def paged_session(request, tmp_path):
    """A course service holding one session of 10 events m0..m9 in time order."""
    if request.param == "memory":
        service = InMemorySessionService()
    else:
        service = SqliteSessionService(tmp_path / "pages.db")
    session = await service.create_session(app_name=APP, user_id="alice", session_id="s")
    for i in range(10):
        await service.append_event(session=session, event=say(f"m{i}"))
    yield service
    await service.close()


async def page(service, **kwargs) -> list[str]:
    events = await service.list_events(app_name=APP, user_id="alice", session_id="s", **kwargs)
    return [e.content.parts[0].text for e in events]


async def test_list_events_pages_in_time_order(paged_session):
    assert await page(paged_session) == [f"m{i}" for i in range(10)]
    # positions are 1-based: m0 is at position 1, so after=3 starts at m3
    assert await page(paged_session, after=3) == ["m3", "m4", "m5", "m6", "m7", "m8", "m9"]
    assert await page(paged_session, after=3, limit=2) == ["m3", "m4"]
    assert await page(paged_session, limit=2, offset=2) == ["m2", "m3"]
    assert await page(paged_session, after=2, limit=2, offset=2) == ["m4", "m5"]
    assert await page(paged_session, after=10) == []
    assert await page(paged_session, limit=0) == []


async def test_list_events_bad_arguments(paged_session):
    for bad in ({"after": -1}, {"limit": -5}, {"offset": 1.5}, {"limit": "10"}, {"after": True}):
        with pytest.raises(ValueError, match="entier"):
            await page(paged_session, **bad)
    with pytest.raises(SessionNotFoundError):
        await paged_session.list_events(app_name=APP, user_id="bob", session_id="s")


async def test_in_memory_database_path_works_with_one_connection():
    async with SqliteSessionService(":memory:") as service:
        session = await service.create_session(app_name=APP, user_id="alice")
        await service.append_event(session=session, event=say("x"))
        again = await service.get_session(app_name=APP, user_id="alice", session_id=session.id)
        assert len(again.events) == 1


async def test_user_state_json_is_compact_like_the_lesson_shows(sqlite_service):
    session = await sqlite_service.create_session(app_name=APP, user_id="alice")
    progression = LESSON_PROGRESSION["progression"]
    await sqlite_service.append_event(
        session=session, event=say("x", {"user:progression": progression})
    )
    await sqlite_service.close()
    with sqlite3.connect(sqlite_service.db_path) as conn:
        rows = conn.execute("SELECT app_name, user_id, state FROM user_states").fetchall()
    assert rows == [
        (
            "tuteur",
            "alice",
            '{"progression":{"python":{"niveau":4,"serie":[false],"bonnes":2,"total":3,'
            '"a_revoir":["d\\u00e9corateurs de fonction"]}}}',
        )
    ]


async def test_listed_sessions_are_whole_pydantic_sessions(sqlite_service):
    """Listed sessions are built without re-validation: they must still be the very objects
    a validated Session is (equality, dumps, copies, pickling, fields set, assignment)."""
    import copy
    import pickle

    from course.sessions import Session

    made = await sqlite_service.create_session(
        app_name=APP, user_id="alice", state={"sujet": "sql", "user:niveau": 2}
    )
    for user_id in ("alice", None):
        (listed,) = (await sqlite_service.list_sessions(app_name=APP, user_id=user_id)).sessions
        validated = Session(**made.model_dump())
        assert type(listed) is Session
        assert listed == validated == made and listed.model_dump() == validated.model_dump()
        assert listed.model_dump_json() == validated.model_dump_json()
        assert repr(listed) == repr(validated)
        assert listed.model_fields_set == validated.model_fields_set
        assert listed.__pydantic_extra__ is None and listed.__pydantic_private__ is None
        for twin in (copy.copy(listed), copy.deepcopy(listed), pickle.loads(pickle.dumps(listed))):
            assert twin == listed
        changed = listed.model_copy(update={"state": {}})
        assert changed.state == {} and listed.state == made.state
        listed.last_update_time = 0.0
        listed.events.append(say("x"))
        assert listed != made and validated == made


@pytest.mark.parametrize("table", ["app_states", "user_states"])
@pytest.mark.parametrize("bad_state", ["", "[]", '{"a": 1}, {}', "{pas du json"])
async def test_a_scoped_state_that_is_not_a_json_object_gets_a_clear_error(
    tmp_path, table, bad_state
):
    path = tmp_path / "tuteur.db"
    async with SqliteSessionService(path) as service:
        for n in range(2):
            await service.create_session(
                app_name=APP, user_id="alice", state={"n": n, "app:v": 1, "user:u": 2}
            )
    with sqlite3.connect(path) as conn:
        conn.execute(f"UPDATE {table} SET state = ?", (bad_state,))
    conn.close()
    async with SqliteSessionService(path) as service:
        for user_id in ("alice", None):
            with pytest.raises(InvalidDatabaseError, match=f"table {table}"):
                await service.list_sessions(app_name=APP, user_id=user_id)


async def test_a_service_dropped_without_close_ends_its_thread_and_frees_the_file(sqlite_db_path):
    import gc

    threads_before = threading.active_count()
    service = SqliteSessionService(sqlite_db_path)
    await service.create_session(app_name=APP, user_id="alice")
    assert threading.active_count() == threads_before + 1 and open_files_under(sqlite_db_path)
    del service
    gc.collect()
    for _ in range(100):  # the connection closes in its thread, then the thread ends
        if threading.active_count() == threads_before and not open_files_under(sqlite_db_path):
            break
        await asyncio.sleep(0.01)
    assert threading.active_count() == threads_before
    assert open_files_under(sqlite_db_path) == []
