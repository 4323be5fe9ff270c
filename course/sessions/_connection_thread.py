"""``ConnectionThread``: one sqlite3 connection and the one daemon thread that runs its jobs.

What ``SqliteSessionService`` needs from an asyncio bridge to sqlite3, and no more:

- a job is a whole function of the connection, so a transaction of several statements costs
  one thread hop, not one per statement;
- the thread is a daemon: a forgotten ``close()`` does not keep the process alive at exit (the
  OS closes the file, and SQLite's journal keeps it sound);
- a read runs in place, in the event loop's thread, when the connection is idle (``run_here``).
  Measured (``tests/bench/bench_speedups.py``): a session of 20 events read in place is 1.4x
  faster than through the thread; the hop costs more than a small read itself, and building
  the results is Python work that holds the GIL, so the thread would not free the loop for it.
  A read in place never waits for a lock: if another program holds one, it goes to the thread.
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import Callable
from queue import SimpleQueue
from typing import Any, TypeVar

from ._sqlite_ops import is_busy

__all__ = ["NOT_HERE", "ConnectionThread"]

T = TypeVar("T")
NOT_HERE: Any = object()  # what run_here returns when the job must go to the thread
_STOP: Any = object()


def _deliver(future: asyncio.Future | None, outcome: Any, failed: bool) -> None:
    """Hand a job's result (or error) to the future that waits for it, on its loop."""

    def settle() -> None:
        if not future.done():  # the waiting task may have been cancelled
            (future.set_exception if failed else future.set_result)(outcome)

    if future is None:
        return
    try:
        future.get_loop().call_soon_threadsafe(settle)
    except RuntimeError:
        pass  # the event loop is closed: nobody waits for this result any more


def _serve(jobs: SimpleQueue) -> None:
    """The thread's whole life: run the queued jobs in order until told to stop."""
    while True:
        future, job = jobs.get()
        if job is _STOP:
            return
        try:
            result = job()
        except BaseException as exc:  # handed to the caller, who raises it
            _deliver(future, exc, True)
        else:
            _deliver(future, result, False)


class _LockedInPlace(Exception):
    """A read in place met a lock that it would have had to wait for."""


class ConnectionThread:
    """One sqlite3 connection, used by one thread at a time: its own (``run``) or the event
    loop's for a read on an idle connection (``run_here``)."""

    def __init__(self, busy_timeout_ms: int) -> None:
        self._busy_timeout_ms = busy_timeout_ms
        self._jobs: SimpleQueue = SimpleQueue()
        self._db: sqlite3.Connection | None = None
        # Held by whichever thread runs statements on the connection.
        self._in_use = threading.Lock()
        self.thread = threading.Thread(
            target=_serve, args=(self._jobs,), name="course-sqlite", daemon=True
        )

    @property
    def in_use(self) -> bool:
        """True while a job runs on the connection."""
        return self._in_use.locked()

    def _submit(self, job: Callable[[], T]) -> asyncio.Future[T]:
        future = asyncio.get_running_loop().create_future()
        self._jobs.put((future, job))
        return future

    async def open(self, connect: Callable[[], sqlite3.Connection]) -> None:
        """Start the thread and make the connection in it (``connect`` may touch the disk)."""
        self.thread.start()
        try:
            self._db = await self._submit(connect)
        except BaseException:
            self._jobs.put((None, _STOP))
            raise

    async def run(self, job: Callable[[sqlite3.Connection], T]) -> T:
        """``job(connection)`` in the thread, after the jobs queued before it."""
        db = self._db
        if db is None:
            raise sqlite3.ProgrammingError("Cannot operate on a closed database.")
        in_use = self._in_use

        def alone() -> T:
            with in_use:
                return job(db)

        return await self._submit(alone)

    def run_here(self, job: Callable[[sqlite3.Connection], T]) -> T:
        """``job(connection)`` in the calling thread if the connection is idle, with a busy
        timeout of 0; ``NOT_HERE`` if the connection is in use or the job met another
        program's lock (then ``run`` it: the thread waits for the lock, the loop does not)."""
        db = self._db
        if db is None or not self._in_use.acquire(blocking=False):
            return NOT_HERE
        try:
            db.execute("PRAGMA busy_timeout = 0")
            try:
                return job(db)
            except sqlite3.OperationalError as exc:
                if is_busy(exc):
                    raise _LockedInPlace from exc
                raise
            finally:
                db.execute(f"PRAGMA busy_timeout = {self._busy_timeout_ms}")
        except _LockedInPlace:
            return NOT_HERE
        finally:
            self._in_use.release()

    async def close(self) -> None:
        """Close the connection after the queued jobs, then end the thread (twice is fine)."""
        db, self._db = self._db, None
        if db is not None:
            try:
                await self._submit(db.close)
            finally:
                self._jobs.put((None, _STOP))
                # The thread has handed back its last result; it ends within microseconds.
                self.thread.join(timeout=5)

    def __del__(self) -> None:
        # Dropped without close(): close the connection in its thread and end the thread.
        if self._db is not None and self.thread.is_alive():
            self._jobs.put((None, self._db.close))
            self._jobs.put((None, _STOP))
