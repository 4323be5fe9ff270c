"""Reads run in the event loop's thread, writes in the connection's; a lock never blocks the loop.

``SqliteSessionService`` saves the thread hop on reads (see ``_run``). These tests show where
each statement runs, that a read meeting another program's lock waits in the worker and not in
the event loop, that a read never uses the connection while the worker holds it, and that many
concurrent reads and writes on one service stay consistent. They assert what happened, in what
order, never how fast: the event loop itself releases the lock a read waits for, so a read that
blocked the loop would never end (it fails once SQLite's busy timeout runs out).
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading

import pytest
from helpers import say

from course.sessions import SqliteSessionService
from course.sessions import sqlite_session_service as service_module

APP = "tuteur"
PATIENT_MS = 30_000  # a busy timeout no passing run reaches: the test itself releases the lock


async def until(condition, what: str) -> None:
    """Yield to the event loop until ``condition()`` holds (at most about 100 s)."""
    for _ in range(100_000):
        if condition():
            return
        await asyncio.sleep(0.001)
    raise AssertionError(f"jamais arrivé : {what}")


def timeouts_of_reads(statements: list[str]) -> set[str]:
    """The busy timeouts in force when each statement other than a PRAGMA ran."""
    current, seen = "default", set()
    for sql in statements:
        if sql.startswith("PRAGMA busy_timeout"):
            current = sql.split("=")[1].strip()
        elif not sql.startswith("PRAGMA"):
            seen.add(current)
    return seen


async def patient(service: SqliteSessionService) -> None:
    """Make the service's connection wait for locks as long as it takes (in its worker)."""
    conn = await service._connection()
    conn._busy_timeout_ms = PATIENT_MS
    await conn.run(lambda db: db.execute(f"PRAGMA busy_timeout = {PATIENT_MS}"))


async def test_reads_run_in_the_loop_thread_and_writes_in_the_worker(sqlite_service):
    session = await sqlite_service.create_session(app_name=APP, user_id="alice")
    conn = await sqlite_service._connection()
    seen: list[int] = []
    await conn.run(
        lambda db: db.set_trace_callback(lambda _sql: seen.append(threading.get_ident()))
    )
    await sqlite_service.get_session(app_name=APP, user_id="alice", session_id=session.id)
    await sqlite_service.list_sessions(app_name=APP, user_id="alice")
    await sqlite_service.list_sessions(app_name=APP)
    await sqlite_service.list_events(app_name=APP, user_id="alice", session_id=session.id)
    await sqlite_service.get_user_state(app_name=APP, user_id="alice")
    reads, seen[:] = set(seen), []
    await sqlite_service.append_event(session=session, event=say("Bonjour"))
    await sqlite_service.create_session(app_name=APP, user_id="bob")
    await sqlite_service.delete_session(app_name=APP, user_id="alice", session_id=session.id)
    writes = set(seen)
    await conn.run(lambda db: db.set_trace_callback(None))
    assert reads == {threading.get_ident()}
    assert len(writes) == 1 and writes != reads
    assert writes == {conn.thread.ident}


async def test_a_read_meeting_a_lock_waits_in_the_worker_not_in_the_loop(
    sqlite_db_path, monkeypatch
):
    """The lock is released by the event loop itself, while the read waits: had the read
    waited in the loop's thread, nothing could release it and it would fail (busy)."""
    # A file in a rollback journal: the service cannot switch it to WAL while another program
    # reads it, so its readers can meet a writer's lock (in WAL they seldom do).
    async with SqliteSessionService(sqlite_db_path) as service:
        await service.create_session(app_name=APP, user_id="alice", session_id="s1")
    with sqlite3.connect(sqlite_db_path) as conn:
        conn.execute("PRAGMA journal_mode = DELETE")
    conn.close()
    other = sqlite3.connect(sqlite_db_path, isolation_level=None, check_same_thread=False)
    monkeypatch.setattr(service_module, "BUSY_TIMEOUT_MS", 200)  # the open below waits this
    try:
        other.execute("BEGIN")
        other.execute("SELECT count(*) FROM sessions").fetchone()
        async with SqliteSessionService(sqlite_db_path) as service:
            await service.list_sessions(app_name=APP)  # opens, keeping the old mode
            await patient(service)
            statements: list[tuple[int, str]] = []
            await service._conn.run(
                lambda db: db.set_trace_callback(
                    lambda sql: statements.append((threading.get_ident(), sql))
                )
            )
            other.execute("COMMIT")
            assert other.execute("PRAGMA journal_mode").fetchone() == ("delete",)
            other.execute("BEGIN EXCLUSIVE")  # no one may read until it commits
            read = asyncio.create_task(service.list_sessions(app_name=APP, user_id="alice"))
            # the read went to the worker, which now waits for the lock...
            await until(lambda: service._conn.in_use, "la lecture attend dans le fil")
            for _ in range(10):  # the loop goes on running while the read waits
                await asyncio.sleep(0)
            assert not read.done()
            other.execute("COMMIT")  # ...and the loop, free meanwhile, releases it
            listing = await read
            await service._conn.run(lambda db: db.set_trace_callback(None))
    finally:
        other.close()
    assert [s.id for s in listing.sessions] == ["s1"]
    # in the loop's thread, the read was tried with no patience at all (busy timeout 0), then
    # the worker read the listing
    loop = threading.get_ident()
    assert timeouts_of_reads([sql for thread, sql in statements if thread == loop]) == {"0"}
    assert any("FROM sessions" in sql for thread, sql in statements if thread != loop)


async def test_a_read_waits_for_the_worker_and_never_shares_the_connection(sqlite_service):
    """A read arriving while the worker holds the connection queues behind it (it does not
    use the connection in place): it ends after the write and sees its event."""
    session = await sqlite_service.create_session(app_name=APP, user_id="alice")
    await patient(sqlite_service)
    other = sqlite3.connect(sqlite_service.db_path, isolation_level=None, check_same_thread=False)
    order: list[str] = []
    try:
        other.execute("BEGIN IMMEDIATE")  # the service's write waits for this lock, in its worker

        async def write() -> None:
            await sqlite_service.append_event(session=session, event=say("Bonjour"))
            order.append("write")

        async def read():
            got = await sqlite_service.get_session(
                app_name=APP, user_id="alice", session_id=session.id
            )
            order.append("read")
            return got

        writing = asyncio.create_task(write())
        await until(lambda: sqlite_service._conn.in_use, "l'écriture tient la connexion")
        reading = asyncio.create_task(read())
        for _ in range(10):  # a read wrongly run in place would end in its first step
            await asyncio.sleep(0)
        assert order == [] and not reading.done() and not writing.done()
        other.execute("COMMIT")  # released by the loop, free while both wait
        await writing
        got = await reading
    finally:
        other.close()
    assert order == ["write", "read"]
    assert [e.content.parts[0].text for e in got.events] == ["Bonjour"]


async def test_concurrent_reads_and_writes_on_one_service_stay_consistent(sqlite_service):
    sessions = [
        await sqlite_service.create_session(app_name=APP, user_id=f"u{i}", session_id=f"s{i}")
        for i in range(5)
    ]

    async def writer(session) -> None:
        for n in range(20):
            await sqlite_service.append_event(session=session, event=say(f"{session.id}-{n}"))

    async def reader() -> int:
        counts = 0
        for _ in range(40):
            listing = await sqlite_service.list_sessions(app_name=APP)
            counts += len(listing.sessions)
            got = await sqlite_service.get_session(app_name=APP, user_id="u0", session_id="s0")
            assert [e.content.parts[0].text for e in got.events] == [
                f"s0-{n}" for n in range(len(got.events))
            ]
        return counts

    results = await asyncio.gather(*(writer(s) for s in sessions), reader(), reader())
    assert results[-2:] == [200, 200]
    for i in range(5):
        got = await sqlite_service.get_session(app_name=APP, user_id=f"u{i}", session_id=f"s{i}")
        assert [e.content.parts[0].text for e in got.events] == [f"s{i}-{n}" for n in range(20)]


@pytest.mark.parametrize("memory", [False, True], ids=["sqlite", "in-memory"])
def test_a_loop_of_reads_in_place_still_lets_the_loop_run(memory):
    """Learner's walk, stop 58: a loop of reads that never moves on (lesson 5's pages, ``after``
    never advanced) never paused, so Jupyter's Stop, which cancels the cell's task at its next
    pause, did nothing. The reads now let the event loop run at least every HAND_BACK_SECONDS:
    a task beside them runs, and cancelling the loop stops it. Lesson 1's in-memory service
    too (second walk: its reads never paused either)."""
    from course.sessions import InMemorySessionService

    async def scenario() -> int:
        service = InMemorySessionService() if memory else SqliteSessionService(":memory:")
        async with service:
            await service.create_session(app_name=APP, user_id="u", session_id="s")
            ticks = 0

            async def beside() -> None:
                nonlocal ticks
                while True:
                    ticks += 1
                    await asyncio.sleep(0)

            async def endless() -> None:
                while True:
                    await service.get_session(app_name=APP, user_id="u", session_id="s")

            other = asyncio.ensure_future(beside())
            task = asyncio.ensure_future(endless())
            await until(lambda: ticks > 3, "a task beside the loop of reads")
            task.cancel()
            try:
                await task
            except asyncio.CancelledError:
                pass
            other.cancel()
            return ticks

    assert asyncio.run(scenario()) > 3


@pytest.mark.slow
def test_jupyters_stop_ends_a_loop_of_reads_in_a_learners_kernel(tmp_path):
    """The same loop in a kernel of the learner's venv, stopped as JupyterLab stops it, after a
    lesson's first cell (``verifier_dossier()``): the stop is said in one French line (stop 59:
    asyncio's CancelledError traceback, in English, through the service's frames)."""
    import time

    from learner_env import cell_answer, learner_kernel, run_cell

    from course.readable_error import STOPPED

    setup = (
        "from course.dossier import verifier_dossier\n"
        "verifier_dossier()\n"
        "from course.sessions import SqliteSessionService\n"
        "service = SqliteSessionService('boucle.db')\n"
        "await service.create_session(app_name='t', user_id='u', session_id='s')"
    )
    loop = "while True:\n    await service.get_session(app_name='t', user_id='u', session_id='s')"
    with learner_kernel(tmp_path) as (km, kc):
        reply, printed, _ = run_cell(kc, setup)
        assert reply["status"] == "ok", printed
        msg_id = kc.execute(loop)
        time.sleep(2)  # looping
        km.interrupt_kernel()
        reply, _, shown = cell_answer(kc, msg_id, 30)
        assert reply["status"] == "error", reply
        assert shown == [STOPPED], shown
        reply, printed, _ = run_cell(kc, "print('encore là')")  # the kernel answers again
        assert printed == "encore là\n"
