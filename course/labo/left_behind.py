"""What a learner's call left unawaited when it returned, stopped there: one rule for both
TPs' runners (``submission_runner`` for oublier, ``partage_runner`` for oublier_partage)."""

from __future__ import annotations

import asyncio
import gc
import inspect
import warnings

__all__ = ["SETTLE_SECONDS", "left_behind", "never_awaited"]


# how long the cancelled tasks get to end (their finally, their except CancelledError): what
# they do then is part of the call, so it is done before the files are judged
SETTLE_SECONDS = 2.0


async def left_behind() -> bool:
    """Whether the call left work it never awaited: a task still running (``create_task``,
    ``ensure_future``, ``gather`` without await) or a coroutine never started (kept in a list,
    where Python never warns). Awaited in the call's own task as it returns: the call ends
    here, so the tasks are cancelled (what they do on cancellation is done now, before the files
    are judged) and the coroutines closed; nothing of it runs after, in grading as in the
    learner's check (else timing decides the verdict)."""
    current = asyncio.current_task()
    pending = [t for t in asyncio.all_tasks() if t is not current and not t.done()]
    for task in pending:
        task.cancel()
    if pending:  # one still running after that is stopped with the call's process
        await asyncio.wait(pending, timeout=SETTLE_SECONDS)
    created = [
        obj
        for obj in gc.get_objects()
        if inspect.iscoroutine(obj) and inspect.getcoroutinestate(obj) == inspect.CORO_CREATED
    ]
    for coroutine in created:
        coroutine.close()  # no « never awaited » warning later, on a stream nobody reads
    return bool(pending or created)


def never_awaited(warning: warnings.WarningMessage) -> bool:
    """Python's warning for a coroutine freed without ever being awaited: a call without await,
    which raises nothing (recorded with ``warnings.catch_warnings(record=True)``)."""
    return isinstance(warning.message, RuntimeWarning) and "was never awaited" in str(
        warning.message
    )
