"""One conformance suite for the four session services.

Each test runs on the course's in-memory and SQLite services and on google-adk 2.10's two, the
reference. Where the course does better than ADK, the test is marked as a strict expected
failure for ADK's services only: it proves both the improvement and that the test can fail.
"""

from __future__ import annotations

import asyncio
import gc
import json
import time

import pytest
from helpers import STORAGE, make_backend, open_files_under

APP = "tuteur"

# also on ADK 2.10's DatabaseSessionService over a private PostgreSQL (tests/conftest.py)
ALSO_ON_SERVERS = True


async def new_session(backend, user: str = "alice", **kwargs):
    return await backend.service.create_session(app_name=APP, user_id=user, **kwargs)


async def reload(backend, session, **kwargs):
    return await backend.service.get_session(
        app_name=session.app_name, user_id=session.user_id, session_id=session.id, **kwargs
    )


# -- create_session -----------------------------------------------------------------------


async def test_create_session_strips_id_and_generates_uuid(backend, adk_does_worse):
    adk_does_worse("ADK's DatabaseSessionService keeps a session id's spaces", "adk-postgres")
    named = await new_session(backend, session_id="  s1  ")
    assert named.id == "s1"
    assert named.events == [] and named.last_update_time > 0
    for empty in (None, "", "   "):
        made = await new_session(backend, session_id=empty)
        assert len(made.id) == 36 and made.id.count("-") == 4


async def test_create_session_existing_id_raises_already_exists(backend):
    await new_session(backend, session_id="s1")
    with pytest.raises(backend.AlreadyExistsError):
        await new_session(backend, session_id="s1")
    other = await new_session(backend, user="bob", session_id="s1")
    assert other.user_id == "bob"


async def test_create_session_splits_state_by_scope(backend):
    session = await new_session(
        backend, state={"sujet": "python", "user:niveau": 2, "app:version": 1, "temp:x": 9}
    )
    assert session.state == {"sujet": "python", "app:version": 1, "user:niveau": 2}
    assert await backend.service.get_user_state(app_name=APP, user_id="alice") == {"niveau": 2}
    if backend.db_path:
        # The same JSON in each table: compact from the course (as the lessons show it), with
        # json.dumps' default spaces from ADK.
        space = " " if backend.is_adk else ""
        assert backend.sql("SELECT state FROM user_states") == [(f'{{"niveau":{space}2}}',)]
        assert backend.sql("SELECT state FROM app_states") == [(f'{{"version":{space}1}}',)]
        assert backend.sql("SELECT state FROM sessions") == [(f'{{"sujet":{space}"python"}}',)]


# -- get_session ----------------------------------------------------------------------------


async def test_get_session_missing_or_wrong_user_is_none(backend):
    session = await new_session(backend)
    assert await backend.service.get_session(app_name=APP, user_id="alice", session_id="x") is None
    assert (
        await backend.service.get_session(app_name=APP, user_id="bob", session_id=session.id)
        is None
    )
    assert (
        await backend.service.get_session(app_name="autre", user_id="alice", session_id=session.id)
        is None
    )


async def test_get_session_returns_events_in_time_order_and_merged_state(backend):
    session = await new_session(backend, state={"user:niveau": 1})
    texts = [f"message {i}" for i in range(5)]
    for i, text in enumerate(texts):
        await backend.service.append_event(
            session=session, event=backend.text_event(text, delta={"user:niveau": i, "tour": i})
        )
    again = await reload(backend, session)
    assert [e.content.parts[0].text for e in again.events] == texts
    assert again.state == {"tour": 4, "user:niveau": 4}
    assert again.last_update_time == session.last_update_time


# num_recent_events: none, one, some, exactly all, more than exist, none at all (None)
RECENT = [0, 1, 3, 5, 6, 100, None]
# after_timestamp, as an offset from the first event (events at 0, 1, 2, 3, 4): before all,
# equal to the first, between two, equal to one in the middle, equal to the last, after all;
# None for no filter
AFTER = [-10.0, 0.0, 1.5, 2.0, 4.0, 4.5, None]


async def test_get_session_config_at_every_boundary(backend):
    """Every combination of num_recent_events and after_timestamp: the events stamped at or
    after ``after_timestamp`` (``>=``), of which the last ``num_recent_events``, in time order."""
    session = await new_session(backend)
    base = time.time() - 100
    for i in range(5):
        event = backend.text_event(str(i), timestamp=base + i)
        await backend.service.append_event(session=session, event=event)
    wrong = {}
    for recent in RECENT:
        for after in AFTER:
            kept = [str(i) for i in range(5) if after is None or i >= after]
            if recent is not None:
                kept = kept[len(kept) - min(recent, len(kept)) :]
            config = backend.GetSessionConfig(
                num_recent_events=recent, after_timestamp=None if after is None else base + after
            )
            got = [
                e.content.parts[0].text
                for e in (await reload(backend, session, config=config)).events
            ]
            if got != kept:
                wrong[(recent, after)] = (got, kept)
    assert wrong == {}


async def test_get_session_config_on_an_empty_session_and_by_default(backend):
    session = await new_session(backend)
    for config in (
        backend.GetSessionConfig(),
        backend.GetSessionConfig(num_recent_events=3),
        backend.GetSessionConfig(after_timestamp=time.time() - 10, num_recent_events=0),
    ):
        assert (await reload(backend, session, config=config)).events == []
    assert backend.GetSessionConfig().num_recent_events is None
    assert backend.GetSessionConfig().after_timestamp is None
    await backend.service.append_event(session=session, event=backend.text_event("seul"))
    whole = await reload(backend, session, config=backend.GetSessionConfig())
    assert [e.content.parts[0].text for e in whole.events] == ["seul"]


@pytest.mark.parametrize(
    "fields",
    [{"num_recent_events": -1}, {"num_recent_events": 1.5}, {"after_timestamp": "hier"}],
    ids=["negative", "not-an-int", "not-a-time"],
)
def test_get_session_config_refuses_bad_values(backend, fields):
    with pytest.raises(ValueError):
        backend.GetSessionConfig(**fields)


async def test_the_other_sides_config_is_read_the_same(backend):
    """A GetSessionConfig of ADK handed to the course's service, and the other way round."""
    from google.adk.sessions.base_session_service import GetSessionConfig as AdkConfig

    from course.sessions import GetSessionConfig as CourseConfig

    other = CourseConfig if backend.is_adk else AdkConfig
    session = await new_session(backend)
    base = time.time() - 100
    for i in range(4):
        event = backend.text_event(str(i), timestamp=base + i)
        await backend.service.append_event(session=session, event=event)
    config = other(num_recent_events=2, after_timestamp=base + 1)
    got = await reload(backend, session, config=config)
    assert [e.content.parts[0].text for e in got.events] == ["2", "3"]


async def test_equal_timestamps_keep_append_order(backend, adk_does_worse):
    adk_does_worse(
        "ADK's SQLite and DatabaseSessionService break timestamp ties by event id",
        "adk-sqlite",
        "adk-postgres",
    )
    session = await new_session(backend)
    now = time.time()
    for event_id in ("zz", "mm", "aa"):
        event = backend.text_event(event_id, id=event_id, timestamp=now)
        await backend.service.append_event(session=session, event=event)
    again = await reload(backend, session)
    assert [e.id for e in again.events] == ["zz", "mm", "aa"]


async def test_returned_sessions_are_copies(backend):
    session = await new_session(backend, state={"user:niveau": 1, "sujet": "python"})
    session.state["sujet"] = "changé"
    again = await reload(backend, session)
    again.state["user:niveau"] = 99
    again.events.append(backend.text_event("pas stocké"))
    fresh = await reload(backend, session)
    assert fresh.state == {"sujet": "python", "user:niveau": 1}
    assert fresh.events == []


# -- list_sessions --------------------------------------------------------------------------


async def test_list_sessions_oldest_update_first_without_events(backend):
    first = await new_session(backend, state={"user:niveau": 3})
    second = await new_session(backend)
    await new_session(backend, user="bob")
    await backend.service.create_session(app_name="autre", user_id="alice")
    await backend.service.append_event(session=first, event=backend.text_event("reprise"))
    listed = (await backend.service.list_sessions(app_name=APP, user_id="alice")).sessions
    assert [s.id for s in listed] == [second.id, first.id]
    assert all(s.events == [] for s in listed)
    assert listed[1].state == {"user:niveau": 3}
    assert listed[0].state == {"user:niveau": 3}


async def test_list_sessions_without_user_lists_every_user(backend):
    await new_session(backend, user="alice")
    await new_session(backend, user="bob")
    await backend.service.create_session(app_name="autre", user_id="carol")
    listed = (await backend.service.list_sessions(app_name=APP)).sessions
    assert sorted(s.user_id for s in listed) == ["alice", "bob"]
    assert (await backend.service.list_sessions(app_name=APP, user_id="nobody")).sessions == []


async def test_list_sessions_merges_each_users_state_like_get_session(backend):
    """Every listed session carries the same state as get_session gives it (same keys, same
    order: session keys, then app:, then user:) and the same revision time; each listed
    state is the session's own: changing one changes no other, nor storage."""
    await new_session(backend, user="alice", state={"sujet": "python", "app:version": 2})
    await new_session(backend, user="alice", state={"user:niveau": 3, "n": 1})
    await new_session(backend, user="bob", state={"sujet": "sql", "user:niveau": 1})
    await new_session(backend, user="carol")  # no user state at all
    for user_id, count in (("alice", 2), ("bob", 1), ("carol", 1), (None, 4)):
        listed = (await backend.service.list_sessions(app_name=APP, user_id=user_id)).sessions
        assert len(listed) == count
        for session in listed:
            got = await reload(backend, session)
            assert list(session.state.items()) == list(got.state.items())
            assert session.last_update_time == got.last_update_time
            assert session.events == []
        listed[0].state["app:version"] = 99
        listed[0].state["ajout"] = True
        listed[0].events.append("x")
        assert all(s.state.get("app:version") == 2 for s in listed[1:])
        assert all("ajout" not in s.state and s.events == [] for s in listed[1:])
    again = (await backend.service.list_sessions(app_name=APP)).sessions
    assert [s.state["app:version"] for s in again] == [2, 2, 2, 2]
    assert not any("ajout" in s.state for s in again)
    assert [s.state.get("user:niveau") for s in again] == [3, 3, 1, None]


# -- delete_session -------------------------------------------------------------------------


async def test_delete_session_removes_events_and_keeps_user_state(backend):
    session = await new_session(backend)
    await backend.service.append_event(
        session=session, event=backend.text_event("x", delta={"user:progression": {"niveau": 4}})
    )
    await new_session(backend, user="bob")
    await backend.service.delete_session(app_name=APP, user_id="alice", session_id=session.id)
    await backend.service.delete_session(app_name=APP, user_id="alice", session_id="absente")
    assert await reload(backend, session) is None
    assert (await backend.service.list_sessions(app_name=APP, user_id="alice")).sessions == []
    assert await backend.service.get_user_state(app_name=APP, user_id="alice") == {
        "progression": {"niveau": 4}
    }
    again = await new_session(backend)
    assert again.state == {"user:progression": {"niveau": 4}}
    if backend.db_path:
        assert backend.sql("SELECT COUNT(*) FROM events") == [(0,)]
        assert backend.sql("SELECT user_id FROM user_states") == [("alice",)]


# -- append_event ---------------------------------------------------------------------------


async def test_append_event_scopes_and_temp_keys(backend):
    session = await new_session(backend)
    event = backend.text_event(
        "x", delta={"app:a": 1, "user:u": 2, "s": 3, "temp:t": 4, "rien": None}
    )
    returned = await backend.service.append_event(session=session, event=event)
    assert returned is event
    assert session.state["temp:t"] == 4
    assert "temp:t" not in event.actions.state_delta
    again = await reload(backend, session)
    assert again.state == {"s": 3, "rien": None, "app:a": 1, "user:u": 2}
    assert "temp:t" not in again.events[0].actions.state_delta
    if backend.db_path:
        assert json.loads(backend.sql("SELECT state FROM sessions")[0][0]) == {
            "s": 3,
            "rien": None,
        }
        assert "temp" not in backend.sql("SELECT event_data FROM events")[0][0]


async def test_state_delta_merges_shallowly(backend):
    session = await new_session(backend, state={"user:p": {"a": 1, "b": 2}, "user:q": 1})
    await backend.service.append_event(
        session=session, event=backend.text_event("x", delta={"user:p": {"a": 5}})
    )
    assert await backend.service.get_user_state(app_name=APP, user_id="alice") == {
        "p": {"a": 5},
        "q": 1,
    }


async def test_partial_events_are_not_stored(backend):
    session = await new_session(backend)
    event = backend.text_event("en cours", partial=True)
    assert await backend.service.append_event(session=session, event=event) is event
    assert (await reload(backend, session)).events == []


async def test_append_to_missing_session_raises_not_found(backend):
    session = await new_session(backend)
    await backend.service.delete_session(app_name=APP, user_id="alice", session_id=session.id)
    with pytest.raises(backend.SessionNotFoundError):
        await backend.service.append_event(session=session, event=backend.text_event("x"))
    assert issubclass(backend.SessionNotFoundError, ValueError)


async def test_stale_session_raises_and_writes_nothing(backend, adk_does_worse):
    adk_does_worse("ADK's in-memory service has no staleness check", "adk-memory")
    session = await new_session(backend)
    stale = await reload(backend, session)
    await backend.service.append_event(session=session, event=backend.text_event("premier"))
    with pytest.raises(backend.StaleSessionError):
        await backend.service.append_event(
            session=stale, event=backend.text_event("second", delta={"user:x": 1})
        )
    again = await reload(backend, session)
    assert [e.content.parts[0].text for e in again.events] == ["premier"]
    assert await backend.service.get_user_state(app_name=APP, user_id="alice") == {}


async def test_same_event_twice_is_refused(backend, adk_does_worse):
    adk_does_worse("ADK's in-memory service drops a repeated event silently", "adk-memory")
    session = await new_session(backend)
    event = backend.text_event("x")
    await backend.service.append_event(session=session, event=event)
    with pytest.raises(Exception) as caught:
        await backend.service.append_event(session=session, event=event)
    assert "integrity" in type(caught.value).__mro__.__repr__().lower()


async def test_update_time_never_moves_backwards(backend, adk_does_worse):
    adk_does_worse("ADK copies the event's timestamp, even an older one")
    session = await new_session(backend)
    old_event = backend.text_event("construit avant", timestamp=time.time() - 60)
    await backend.service.append_event(session=session, event=backend.text_event("récent"))
    before = session.last_update_time
    await backend.service.append_event(session=session, event=old_event)
    assert session.last_update_time > before
    assert (await reload(backend, session)).last_update_time == session.last_update_time


async def test_a_second_instance_reads_and_writes_the_same_storage(backend, second_service):
    """What the two-instance tests rest on: a second instance is another service object
    wherever the storage lives outside the object (a file), the object itself for an
    in-memory store, and each sees and extends what the other wrote."""
    if STORAGE[backend.name] == "object":
        assert second_service is backend.service
    else:
        assert second_service is not backend.service
    session = await new_session(backend, state={"user:niveau": 2})
    await backend.service.append_event(session=session, event=backend.text_event("un"))
    seen = await second_service.get_session(app_name=APP, user_id="alice", session_id=session.id)
    assert [e.content.parts[0].text for e in seen.events] == ["un"]
    assert seen.state == {"user:niveau": 2}
    await second_service.append_event(session=seen, event=backend.text_event("deux"))
    again = await reload(backend, session)
    assert [e.content.parts[0].text for e in again.events] == ["un", "deux"]


def test_a_kind_that_declares_no_storage_gets_no_service():
    with pytest.raises(ValueError, match="unknown service kind"):
        make_backend("serveur-sans-stockage", None)


async def test_racing_writers_exactly_one_wins(backend, adk_does_worse, second_service):
    # on PostgreSQL, ADK locks the session's row (SELECT ... FOR UPDATE): exactly one wins there
    adk_does_worse("ADK checks staleness outside the write transaction", "adk-memory", "adk-sqlite")
    other = second_service
    for trial in range(50):
        session = await new_session(backend, session_id=f"course-{trial}")
        copy_a = await reload(backend, session)
        copy_b = await other.get_session(app_name=APP, user_id="alice", session_id=session.id)
        results = await asyncio.gather(
            backend.service.append_event(session=copy_a, event=backend.text_event("a")),
            other.append_event(session=copy_b, event=backend.text_event("b")),
            return_exceptions=True,
        )
        stale = [r for r in results if isinstance(r, backend.StaleSessionError)]
        assert len(stale) == 1, f"essai {trial} : {results}"
        assert len((await reload(backend, session)).events) == 1


# -- get_user_state and bad input ---------------------------------------------------------


async def test_get_user_state_without_prefix(backend):
    assert await backend.service.get_user_state(app_name=APP, user_id="alice") == {}
    await new_session(backend, state={"user:progression": {"niveau": 4}, "sujet": "x"})
    assert await backend.service.get_user_state(app_name=APP, user_id="alice") == {
        "progression": {"niveau": 4}
    }


async def test_empty_user_id_never_means_every_user(backend, adk_does_worse):
    adk_does_worse("ADK treats user_id='' as 'all users' in list_sessions")
    await new_session(backend, user="alice")
    with pytest.raises(ValueError):
        await backend.service.list_sessions(app_name=APP, user_id="")


@pytest.mark.parametrize(
    "kwargs",
    [
        {"app_name": "", "user_id": "alice"},
        {"app_name": APP, "user_id": ""},
        {"app_name": APP, "user_id": 42},
        {"app_name": None, "user_id": "alice"},
        {"app_name": APP, "user_id": "alice", "session_id": 7},
    ],
    ids=["empty-app", "empty-user", "int-user", "none-app", "int-session"],
)
async def test_bad_names_are_refused(backend, adk_does_worse, kwargs):
    typed_by_pydantic = kwargs["app_name"] is None or kwargs["user_id"] == 42
    # ADK's in-memory Session model rejects a non-str name, its SQLite service stores it first,
    # its DatabaseSessionService hands it to PostgreSQL, whose driver error is no ValueError.
    names = ("adk-sqlite", "adk-postgres") if typed_by_pydantic else ()
    adk_does_worse("ADK stores any app_name/user_id without a check", *names)
    with pytest.raises(ValueError):
        await backend.service.create_session(**kwargs)
    assert (await backend.service.list_sessions(app_name=APP)).sessions == []


async def test_state_that_is_not_json_is_refused_and_nothing_stored(backend, adk_does_worse):
    adk_does_worse("ADK stores repr() of the value (or the object itself)")
    with pytest.raises(ValueError):
        await new_session(backend, state={"user:f": object()})
    session = await new_session(backend)
    with pytest.raises(ValueError):
        await backend.service.append_event(
            session=session, event=backend.text_event("x", delta={"user:f": {1, 2}})
        )
    assert (await reload(backend, session)).events == []
    assert await backend.service.get_user_state(app_name=APP, user_id="alice") == {}


@pytest.mark.parametrize("backend", ["course-sqlite", "adk-sqlite"], indirect=True)
async def test_no_file_handle_left_once_closed(backend, adk_does_worse):
    adk_does_worse("ADK's constructor leaves a sqlite3 connection open until garbage collection")
    await new_session(backend)
    await backend.service.get_user_state(app_name=APP, user_id="alice")
    gc.disable()  # what a program holds, not what a lucky garbage collection would free
    try:
        other = backend.again()  # a second service on the existing file
        for service in (backend.service, other):
            close = getattr(service, "close", None)
            if close is not None:
                await close()
        held = open_files_under(backend.db_path)
    finally:
        gc.enable()
    assert held == []
