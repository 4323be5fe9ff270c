"""Reads run in the event loop's thread, writes in the connection's; a lock never blocks the loop.

``SqliteSessionService`` saves the thread hop on reads (see ``_run``). These tests show where
each statement runs, that a read meeting another program's lock waits in the worker and not in
the event loop, that a read never uses the connection while the worker holds it, and that many
concurrent reads and writes on one service stay consistent.
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
import time

from helpers import say

from course.sessions import SqliteSessionService
from course.sessions import sqlite_session_service as service_module

APP = "tuteur"
HELD = 0.5  # seconds another program keeps its lock
MAX_GAP = 0.25  # the loop must never stall this long while that lock is held


class LoopWatch:
    """Ticks every 5 ms on the event loop and keeps the longest gap between two ticks."""

    def __init__(self) -> None:
        self.longest = 0.0
        self._task: asyncio.Task | None = None

    async def _tick(self) -> None:
        last = time.perf_counter()
        while True:
            await asyncio.sleep(0.005)
            now = time.perf_counter()
            self.longest = max(self.longest, now - last)
            last = now

    async def __aenter__(self) -> LoopWatch:
        self._task = asyncio.create_task(self._tick())
        await asyncio.sleep(0.02)
        return self

    async def __aexit__(self, *exc) -> None:
        assert self._task is not None
        await asyncio.sleep(0.02)  # a tick after the last call: a stall just before counts too
        self._task.cancel()


def release_later(conn: sqlite3.Connection, seconds: float) -> threading.Timer:
    """Commit ``conn``'s transaction (releasing its lock) from another thread after a while."""
    timer = threading.Timer(seconds, lambda: conn.execute("COMMIT"))
    timer.start()
    return timer


def stop_timer(timer: threading.Timer | None) -> None:
    """Cancel the release if a failure came first, and wait for the timer's thread to end."""
    if timer is not None:
        timer.cancel()
        timer.join()


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
    # A file in a rollback journal: the service cannot switch it to WAL while another program
    # reads it, so its readers can meet a writer's lock (in WAL they seldom do).
    async with SqliteSessionService(sqlite_db_path) as service:
        await service.create_session(app_name=APP, user_id="alice", session_id="s1")
    with sqlite3.connect(sqlite_db_path) as conn:
        conn.execute("PRAGMA journal_mode = DELETE")
    conn.close()
    other = sqlite3.connect(sqlite_db_path, isolation_level=None, check_same_thread=False)
    monkeypatch.setattr(service_module, "BUSY_TIMEOUT_MS", 1500)  # the open below waits this
    timer = None
    try:
        other.execute("BEGIN")
        other.execute("SELECT count(*) FROM sessions").fetchone()
        async with SqliteSessionService(sqlite_db_path) as service:
            await service.list_sessions(app_name=APP)  # opens, keeping the old mode
            other.execute("COMMIT")
            assert other.execute("PRAGMA journal_mode").fetchone() == ("delete",)
            other.execute("BEGIN EXCLUSIVE")  # no one may read until it commits
            timer = release_later(other, HELD)
            async with LoopWatch() as watch:
                start = time.perf_counter()
                listing = await service.list_sessions(app_name=APP, user_id="alice")
                waited = time.perf_counter() - start
    finally:
        stop_timer(timer)
        other.close()
    assert [s.id for s in listing.sessions] == ["s1"]
    assert waited >= HELD - 0.1  # it did wait for the lock...
    assert watch.longest < MAX_GAP  # ...and the loop kept running meanwhile


async def test_a_read_waits_for_the_worker_and_never_shares_the_connection(sqlite_service):
    session = await sqlite_service.create_session(app_name=APP, user_id="alice")
    other = sqlite3.connect(sqlite_service.db_path, isolation_level=None, check_same_thread=False)
    timer = None
    try:
        other.execute("BEGIN IMMEDIATE")  # the service's write waits for this lock, in its worker
        timer = release_later(other, HELD)
        async with LoopWatch() as watch:
            write = asyncio.create_task(
                sqlite_service.append_event(session=session, event=say("Bonjour"))
            )
            for _ in range(500):  # until the worker is inside the write, holding the connection
                if sqlite_service._conn.in_use:
                    break
                await asyncio.sleep(0.01)
            assert sqlite_service._conn.in_use and not write.done()
            read = await sqlite_service.get_session(
                app_name=APP, user_id="alice", session_id=session.id
            )
            await write
    finally:
        stop_timer(timer)
        other.close()
    # The read queued behind the write (same connection, one at a time): it sees the event.
    assert [e.content.parts[0].text for e in read.events] == ["Bonjour"]
    assert watch.longest < MAX_GAP


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
