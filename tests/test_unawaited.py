"""course/unawaited.py: in a kernel of the learner's venv, after a lesson's first cell, a call
written without await is said in French in the cell that made it, once; Python's English
warning (« coroutine ... was never awaited », « Enable tracemalloc ») never shows; any other
warning, and a coroutine awaited later, behave as before."""

from __future__ import annotations

import pytest

from course.unawaited import DROPPED, SHOWN, STORED, USED

pytestmark = pytest.mark.slow

SETUP = (
    "from course.dossier import verifier_dossier\n"
    "verifier_dossier()\n"
    "from course.sessions import SqliteSessionService\n"
    "service = SqliteSessionService('oubli.db')\n"
    "await service.create_session(app_name='t', user_id='u', session_id='s')"
)


def _cell(kc, code: str) -> tuple[str, str, str]:
    """(the reply's status, what the cell printed and showed as its result, its error's last
    line)."""
    from learner_env import cell_answer

    msg_id = kc.execute(code)
    reply, printed, shown = cell_answer(kc, msg_id, 120)
    return reply["status"], printed, shown[-1] if shown else ""


def test_a_call_without_await_is_said_in_french_in_its_own_cell(tmp_path):
    from learner_env import learner_kernel, run_cell

    english = ("never awaited", "tracemalloc", "RuntimeWarning")
    with learner_kernel(tmp_path) as (_, kc):
        reply, printed, _ = run_cell(kc, SETUP)
        assert reply["status"] == "ok", printed

        # dropped: a statement; said each time the cell runs
        drop = "service.delete_session(app_name='t', user_id='u', session_id='s')\nprint('fin')"
        for _ in range(2):
            status, printed, _ = _cell(kc, drop)
            assert status == "ok"
            assert printed == "fin\n" + DROPPED.format(call="delete_session") + "\n"

        # bound to a name: said in that cell, and never again when the name is rebound
        status, printed, _ = _cell(kc, "x = service.list_sessions(app_name='t', user_id='u')")
        assert printed == STORED.format(name="x", call="list_sessions") + "\n"
        status, printed, _ = _cell(kc, "x = 1\nprint('suivante')")
        assert printed == "suivante\n"

        # used as a result: the error, then one hint (the name's)
        status, printed, error = _cell(
            kc, "r = service.list_sessions(app_name='t', user_id='u')\nr.sessions"
        )
        assert status == "error" and "'coroutine' object has no attribute" in error
        assert printed == STORED.format(name="r", call="list_sessions") + "\n"
        status, printed, error = _cell(kc, "len(service.list_sessions(app_name='t', user_id='u'))")
        assert status == "error" and "'coroutine'" in error
        assert printed == DROPPED.format(call="list_sessions") + "\n"
        status, printed, error = _cell(kc, "service.list_sessions(app_name='t', user_id='u').a")
        assert status == "error" and "'coroutine' object has no attribute" in error
        assert printed in (USED + "\n", DROPPED.format(call="list_sessions") + "\n"), printed

        # awaited later: it runs, and nothing more is said
        status, printed, _ = _cell(
            kc,
            "y = service.list_sessions(app_name='t', user_id='u')\nprint(len((await y).sessions))",
        )
        assert (status, printed) == ("ok", "1\n")

        # any other warning as before
        status, printed, _ = _cell(kc, "import warnings\nwarnings.warn('autre')")
        assert "UserWarning: autre" in printed

        # the first cell run again installs nothing twice
        reply, printed, _ = run_cell(kc, SETUP.replace("'s'", "'s2'"))
        assert reply["status"] == "ok", printed
        status, printed, _ = _cell(kc, drop.replace("'s'", "'s2'"))
        assert printed == "fin\n" + DROPPED.format(call="delete_session") + "\n"

        # shown as the cell's result: the hint in place of <coroutine object ...>
        msg_id = kc.execute("service.get_session(app_name='t', user_id='u', session_id='s')")
        results = []
        while True:
            msg = kc.get_iopub_msg(timeout=60)
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            if msg["msg_type"] in ("execute_result", "stream"):
                results.append(msg["content"].get("data", {}).get("text/plain", ""))
                results.append(msg["content"].get("text", ""))
            if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
                break
        assert kc.get_shell_msg(timeout=60)["parent_header"]["msg_id"] == msg_id  # its reply
        assert SHOWN.format(call="get_session") in results, results
        status, printed, _ = _cell(kc, "print('suite')")  # nothing in a later cell
        assert printed == "suite\n"
        all_said = printed + "".join(results)
        assert not any(word in all_said for word in english), all_said
