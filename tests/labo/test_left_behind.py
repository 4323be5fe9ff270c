"""Work an ``oublier`` starts and never waits for, outside asyncio's tasks (a thread, a job given
to an executor), is named as left behind (« unawaited ») and done before the files are judged,
whatever its timing, in the learner's ``verifier`` as in grading (course/labo/left_behind.py)."""

from __future__ import annotations

import pytest

from course.labo.evaluate import evaluate_source

pytestmark = pytest.mark.timeout(600)

SANDBOXED = pytest.mark.parametrize("sandboxed", [False, True], ids=["verifier", "bac-a-sable"])

# the whole erasure, in plain sqlite3, after `delay` seconds: what a thread or an executor runs
ERASE = """
def _effacer(chemin, user_id, delai):
    time.sleep(delai)
    conn = sqlite3.connect(chemin)
    try:
        conn.execute("PRAGMA foreign_keys = ON")
        with conn:
            for table in ("events", "sessions", "user_states"):
                conn.execute(f"DELETE FROM {table} WHERE app_name = ? AND user_id = ?",
                             (APP_NAME, user_id))
        conn.execute("VACUUM")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()


async def oublier(service, user_id):
"""


def _thread(delay: float, wait: str = "") -> str:
    return (
        "import asyncio\nimport threading\nimport time\n"
        + ERASE
        + "    fil = threading.Thread(target=_effacer,"
        + f" args=(service.db_path, user_id, {delay}))\n"
        + "    fil.start()\n"
        + wait
    )


def _executor(call: str) -> str:
    return "import asyncio\nimport time\n" + ERASE + f"    {call}\n"


def _flags(evaluation) -> list[bool]:
    """Each call's « unawaited »: whether it left work it never waited for."""
    return [
        call.outcome.unawaited
        for result in evaluation.results.values()
        for call in result.calls
        if call.outcome is not None
    ]


def _verdict(source: str, sandboxed: bool) -> tuple[int, list[bool]]:
    evaluation = evaluate_source(source, sandboxed=sandboxed)
    flags = _flags(evaluation)
    assert flags, evaluation.outcome()
    # the work, waited for as the call returns, is done before the files are judged
    assert evaluation.score == evaluation.max_score, evaluation.verdicts
    return evaluation.score, flags


@SANDBOXED
def test_a_thread_oublier_never_joined_is_left_behind_whatever_its_timing(sandboxed):
    """Attack: an oublier starting ``threading.Thread(target=work)`` (the erasure after a short
    sleep) and returning got a verdict that timing decided: with 0.02 to 0.04 s it differed from
    run to run, and between verifier and grading. A thread the call started and never joined is
    now work left behind, ended or not when the call returned, and waited for before the files
    are judged: every run, every delay, the same verdict. Joined, it is the call's own work."""
    verdicts = {
        (delay, run): _verdict(_thread(delay), sandboxed)
        for delay in (0, 0.02, 0.04)
        for run in range(2)
    }
    assert all(all(flags) for _score, flags in verdicts.values()), verdicts
    assert len({(score, tuple(flags)) for score, flags in verdicts.values()}) == 1, verdicts
    for wait in ("    fil.join()\n", "    await asyncio.to_thread(fil.join)\n"):
        score, flags = _verdict(_thread(0.02, wait), sandboxed)
        assert not any(flags), (wait, flags)


@SANDBOXED
def test_an_executor_job_never_awaited_is_left_behind_and_done_first(sandboxed):
    """Attack: ``run_in_executor`` without await (its job sleeping a whole second) got full
    marks with nothing named, asyncio.run waiting for the executor. Its future (not a task) is
    pending as the call returns: work left behind, waited for before the files are judged. The
    same job awaited, or ``asyncio.to_thread`` awaited, is the call's own work."""
    job = "_effacer, service.db_path, user_id"
    unawaited = _executor(f"asyncio.get_running_loop().run_in_executor(None, {job}, 1)")
    assert all(_verdict(unawaited, sandboxed)[1])
    for awaited in (
        f"await asyncio.get_running_loop().run_in_executor(None, {job}, 0.02)",
        f"await asyncio.to_thread({job}, 0.02)",
    ):
        assert not any(_verdict(_executor(awaited), sandboxed)[1]), awaited


def test_the_right_answers_leave_nothing_behind(graded_samples, sample_answers):
    """The course's right answers, graded as the hooks grade them (every scenario, sandboxed),
    and on ADK's service (whose aiosqlite threads may still be ending as the call returns), are
    never named as leaving work behind; an aiosqlite connection of the learner's own, closed
    before returning, neither. Control: the same erasure given to a thread never joined is."""
    for name in ("complete", "complete_vacuum"):
        assert not any(_flags(graded_samples[name])), name
        adk = evaluate_source(sample_answers[name], backend="adk")
        assert adk.score == adk.max_score and not any(_flags(adk)), name
    own = (
        "import aiosqlite\n\n\nasync def oublier(service, user_id):\n"
        "    async with aiosqlite.connect(service.db_path) as db:\n"
        '        for table in ("events", "sessions", "user_states"):\n'
        '            await db.execute(f"DELETE FROM {table} WHERE app_name = ? AND user_id = ?",'
        " (APP_NAME, user_id))\n"
        "        await db.commit()\n"
        '        await db.execute("VACUUM")\n'
        '        await db.execute("PRAGMA wal_checkpoint(TRUNCATE)")\n'
    )
    for sandboxed in (False, True):
        assert not any(_verdict(own, sandboxed)[1]), sandboxed
    assert all(_verdict(_thread(0), False)[1])
