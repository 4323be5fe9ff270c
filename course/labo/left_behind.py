"""What a learner's call left unawaited when it returned, stopped there: one rule for both
TPs' runners (``submission_runner`` for oublier, ``partage_runner`` for oublier_partage)."""

from __future__ import annotations

import asyncio
import concurrent.futures
import concurrent.futures.thread
import gc
import inspect
import sys
import threading
import warnings
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Collection

__all__ = ["SETTLE_SECONDS", "left_behind", "never_awaited", "watch_threads"]


# how long the cancelled tasks get to end (their finally, their except CancelledError), and the
# threads and executor jobs the call left to finish: what they do then is part of the call, so
# it is done before the files are judged
SETTLE_SECONDS = 2.0
_POLL = 0.005

# every thread started once ``watch_threads`` was called, with the loop it runs, and the ids of
# those something waited for (``join``, or ``is_alive`` found false): whether a thread had
# ended when the call returned, which timing decides, is never what counts
_STARTED: list[tuple[threading.Thread, object]] = []
_WAITED: set[int] = set()


def _note_threads() -> None:
    thread = threading.Thread
    if getattr(thread.start, "noted", False):
        return
    start, join, is_alive = thread.start, thread.join, thread.is_alive

    def noted_start(self):
        run = getattr(self, "_target", None) or type(self).run  # gone once it has run
        start(self)
        _STARTED.append((self, run))

    def seen(self, alive: bool) -> bool:
        if not alive and any(self is started for started, _run in _STARTED):
            _WAITED.add(id(self))
        return alive

    def noted_join(self, timeout=None):
        join(self, timeout)
        seen(self, is_alive(self))

    def noted_is_alive(self):
        return seen(self, is_alive(self))

    for wrapper, wrapped in ((noted_start, start), (noted_join, join), (noted_is_alive, is_alive)):
        wrapper.__name__, wrapper.__qualname__ = wrapped.__name__, wrapped.__qualname__
        wrapper.__doc__, wrapper.noted = wrapped.__doc__, True
        setattr(thread, wrapped.__name__, wrapper)


def watch_threads() -> int:
    """Called before the learner's cell is loaded: the threads started from then on (by the
    cell as it loads, by the call) are judged by ``left_behind(watch_threads())``."""
    _note_threads()
    return len(_STARTED)


def _worker_loops() -> set:
    """The loops of the threads that run jobs handed to them as futures (an executor's, an
    aiosqlite connection's, the course service's): such a thread idles between jobs, or ends
    as its connection closes, and its jobs are judged by their futures."""
    aiosqlite = sys.modules.get("aiosqlite.core")
    service = sys.modules.get("course.sessions._connection_thread")
    return {
        concurrent.futures.thread._worker,
        getattr(aiosqlite, "_connection_worker_thread", None),  # aiosqlite 0.22
        getattr(getattr(aiosqlite, "Connection", None), "run", None),  # 0.21: a Thread
        getattr(service, "_serve", None),
    } - {None}


def _pending(obj, loop: asyncio.AbstractEventLoop) -> bool:
    """A future (not a task) nobody awaited: a job given to an executor (or to a thread)."""
    if isinstance(obj, concurrent.futures.Future):
        return not obj.done()
    return (
        isinstance(obj, asyncio.Future)
        and not isinstance(obj, asyncio.Task)
        and not obj.done()
        and obj.get_loop() is loop
    )


async def left_behind(since: int, spared: Collection[threading.Thread] = ()) -> bool:
    """Whether the call left work it never awaited: a task still running (``create_task``,
    ``ensure_future``, ``gather`` without await), a coroutine never started (kept in a list,
    where Python never warns), a job given to an executor (``run_in_executor`` without await),
    or a thread started since `since` (``watch_threads``; but those `spared`, the runner's)
    that nothing waited for (``join``), ended or not. Awaited in the call's own task as it
    returns: the call ends here, so the tasks are cancelled (what they do on cancellation is
    done now, before the files are judged), the jobs and threads waited for, the coroutines
    closed; nothing of it runs after, in grading as in the learner's check (else timing decides
    the verdict)."""
    loop = asyncio.get_running_loop()
    end = loop.time() + SETTLE_SECONDS
    current = asyncio.current_task()
    pending = [t for t in asyncio.all_tasks() if t is not current and not t.done()]
    for task in pending:
        task.cancel()
    jobs = [obj for obj in gc.get_objects() if _pending(obj, loop)]
    workers = _worker_loops()
    threads = [
        thread
        for thread, run in _STARTED[since:]
        if id(thread) not in _WAITED
        and not any(thread is other for other in spared)
        and not any(run is worker for worker in workers)
    ]
    waited = pending + [asyncio.wrap_future(job) for job in jobs]
    if waited:  # one still running after that is stopped with the call's process
        await asyncio.wait(waited, timeout=SETTLE_SECONDS)
    alive = threading.Thread.is_alive
    while any(alive(t) for t in threads) and loop.time() < end:
        await asyncio.sleep(_POLL)
    created = [
        obj
        for obj in gc.get_objects()
        if inspect.iscoroutine(obj) and inspect.getcoroutinestate(obj) == inspect.CORO_CREATED
    ]
    for coroutine in created:
        coroutine.close()  # no « never awaited » warning later, on a stream nobody reads
    return bool(pending or jobs or threads or created)


def never_awaited(warning: warnings.WarningMessage) -> bool:
    """Python's warning for a coroutine freed without ever being awaited: a call without await,
    which raises nothing (recorded with ``warnings.catch_warnings(record=True)``)."""
    return isinstance(warning.message, RuntimeWarning) and "was never awaited" in str(
        warning.message
    )
