"""File-format interop: a file written by the course's service is read by ADK's, and back.

Both directions compare everything a tutor relies on: the sessions and their order, merged
state, and for each event its id, author, time, text, function calls and responses and
state_delta. Each side then appends to the other's file.
"""

from __future__ import annotations

import sqlite3

import pytest

APP = "tuteur"


async def write_conversation(kit) -> None:
    """Two sessions for alice, one for bob: text, tool call, tool response, state deltas."""
    svc = kit.service
    first = await svc.create_session(
        app_name=APP, user_id="alice", state={"app:version": 1, "sujet": "python"}
    )
    call = kit.FunctionCall(id="c1", name="noter_reponse", args={"juste": True, "q": "é"})
    response = kit.FunctionResponse(id="c1", name="noter_reponse", response={"niveau": 2})
    events = [
        kit.text_event("Bonjour, je suis Alice", author="user"),
        kit.Event(
            author="tuteur",
            invocation_id="inv-1",
            content=kit.Content(role="model", parts=[kit.Part(function_call=call)]),
        ),
        kit.Event(
            author="tuteur",
            invocation_id="inv-1",
            content=kit.Content(role="user", parts=[kit.Part(function_response=response)]),
            actions=kit.EventActions(
                state_delta={"user:progression": {"niveau": 2, "a_revoir": ["décorateurs"]}}
            ),
        ),
        kit.text_event(
            "Bravo ! Niveau 2.", author="tuteur", delta={"dernier": None, "app:vu": True}
        ),
    ]
    for event in events:
        await svc.append_event(session=first, event=event)
    second = await svc.create_session(app_name=APP, user_id="alice")
    await svc.append_event(session=second, event=kit.text_event("Me revoilà", author="user"))
    bob = await svc.create_session(app_name=APP, user_id="bob", state={"user:niveau": 1})
    await svc.append_event(session=bob, event=kit.text_event("Salut", author="user"))


def describe_event(event) -> dict:
    parts = event.content.parts if event.content and event.content.parts else []
    return {
        "id": event.id,
        "author": event.author,
        "invocation_id": event.invocation_id,
        "timestamp": event.timestamp,
        "text": [p.text for p in parts if p.text],
        "calls": [
            (p.function_call.id, p.function_call.name, p.function_call.args)
            for p in parts
            if p.function_call
        ],
        "responses": [
            (p.function_response.id, p.function_response.name, p.function_response.response)
            for p in parts
            if p.function_response
        ],
        "state_delta": event.actions.state_delta,
    }


async def describe_file(kit) -> dict:
    """Everything a reader sees, in plain data, so two services can be compared."""
    svc = kit.service
    seen = {}
    for user in ("alice", "bob"):
        listed = (await svc.list_sessions(app_name=APP, user_id=user)).sessions
        for session in listed:
            full = await svc.get_session(app_name=APP, user_id=user, session_id=session.id)
            seen[(user, session.id)] = {
                "listed_state": session.state,
                "state": full.state,
                "update_time": full.last_update_time,
                "events": [describe_event(e) for e in full.events],
            }
        seen[user] = [s.id for s in listed]
        seen[(user, "user_state")] = await svc.get_user_state(app_name=APP, user_id=user)
    seen["all"] = [s.id for s in (await svc.list_sessions(app_name=APP)).sessions]
    return seen


@pytest.mark.parametrize(
    ("writer", "reader"),
    [("course-sqlite", "adk-sqlite"), ("adk-sqlite", "course-sqlite")],
    ids=["course-writes-adk-reads", "adk-writes-course-reads"],
)
async def test_file_written_by_one_is_read_by_the_other(backend_factory, tmp_path, writer, reader):
    db_path = tmp_path / "partage.db"
    write_kit = backend_factory(writer, db_path)
    await write_conversation(write_kit)
    seen_by_writer = await describe_file(write_kit)
    if hasattr(write_kit.service, "close"):
        await write_kit.service.close()

    read_kit = backend_factory(reader, db_path)
    seen_by_reader = await describe_file(read_kit)
    assert seen_by_reader == seen_by_writer
    alice_first = seen_by_reader[("alice", seen_by_reader["alice"][0])]
    assert [e["author"] for e in alice_first["events"]] == ["user", "tuteur", "tuteur", "tuteur"]
    assert alice_first["events"][1]["calls"] == [("c1", "noter_reponse", {"juste": True, "q": "é"})]
    assert alice_first["state"]["user:progression"] == {"niveau": 2, "a_revoir": ["décorateurs"]}
    assert alice_first["state"]["dernier"] is None and alice_first["state"]["app:vu"] is True

    # The reader goes on writing in the writer's file, and the writer reads that back.
    session = await read_kit.service.get_session(
        app_name=APP, user_id="bob", session_id=seen_by_reader["bob"][0]
    )
    await read_kit.service.append_event(
        session=session, event=read_kit.text_event("suite", delta={"user:niveau": 2})
    )
    if hasattr(read_kit.service, "close"):
        await read_kit.service.close()
    again = backend_factory(writer, db_path)
    bob = await again.service.get_session(app_name=APP, user_id="bob", session_id=session.id)
    assert [e.content.parts[0].text for e in bob.events] == ["Salut", "suite"]
    assert bob.state == {"app:version": 1, "app:vu": True, "user:niveau": 2}
    if hasattr(again.service, "close"):
        await again.service.close()
    with sqlite3.connect(db_path) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []


def file_layout(path) -> dict:
    """Tables, their columns (name, type, not null, key position) and foreign keys."""
    with sqlite3.connect(path) as conn:
        tables = [
            t
            for (t,) in conn.execute(
                "SELECT name FROM sqlite_master WHERE type='table' ORDER BY name"
            )
        ]
        return {
            "tables": tables,
            "columns": {
                t: [(c[1], c[2], c[3], c[5]) for c in conn.execute(f"PRAGMA table_info({t})")]
                for t in tables
            },
            "foreign_keys": conn.execute("PRAGMA foreign_key_list(events)").fetchall(),
            "indexes": conn.execute(
                "SELECT name FROM sqlite_master WHERE type='index' AND sql IS NOT NULL"
            ).fetchall(),
        }


async def test_course_file_has_adk_tables_plus_its_indexes(backend_factory):
    layouts = {}
    for name in ("course-sqlite", "adk-sqlite"):
        kit = backend_factory(name)
        await kit.service.create_session(app_name=APP, user_id="alice")
        if hasattr(kit.service, "close"):
            await kit.service.close()
        layouts[name] = file_layout(kit.db_path)
    course, adk = layouts["course-sqlite"], layouts["adk-sqlite"]
    assert course["tables"] == adk["tables"] == ["app_states", "events", "sessions", "user_states"]
    assert course["columns"] == adk["columns"]
    assert course["foreign_keys"] == adk["foreign_keys"]
    assert {row[6] for row in course["foreign_keys"]} == {"CASCADE"}
    assert adk["indexes"] == []
    assert sorted(course["indexes"]) == [
        ("idx_events_session_time",),
        ("idx_sessions_time",),
        ("idx_sessions_user_time",),
    ]
