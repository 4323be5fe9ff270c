"""What a learner's call left unawaited when it returned, stopped there: one rule for both
TPs' runners (``submission_runner`` for oublier, ``partage_runner`` for oublier_partage)."""

from __future__ import annotations

import asyncio
import gc
import inspect

__all__ = ["left_behind"]


def left_behind() -> bool:
    """Whether the call left work it never awaited: a task still running (``create_task``,
    ``ensure_future``, ``gather`` without await) or a coroutine never started (kept in a list,
    where Python never warns). Called in the call's own task as it returns: the call ends here,
    so the tasks are cancelled and the coroutines closed, and nothing of it runs after the base
    is judged, in grading as in the learner's check (else timing decides the verdict)."""
    current = asyncio.current_task()
    pending = [t for t in asyncio.all_tasks() if t is not current and not t.done()]
    for task in pending:
        task.cancel()
    created = [
        obj
        for obj in gc.get_objects()
        if inspect.iscoroutine(obj) and inspect.getcoroutinestate(obj) == inspect.CORO_CREATED
    ]
    for coroutine in created:
        coroutine.close()  # no « never awaited » warning later, on a stream nobody reads
    return bool(pending or created)
