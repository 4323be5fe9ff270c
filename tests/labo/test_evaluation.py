"""The lab's grading, out of process: scores, time limit, cleanup, and tamper resistance."""

from __future__ import annotations

import hashlib
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

import course.labo
from course.labo import ENV_OUT_OF_KERNEL, TESTS, evaluate_source, extract_source, noter, verifier


def _failed(evaluation) -> list[str]:
    return sorted(t for t, v in evaluation.verdicts.items() if not v.ok)


def _want(expected: dict) -> list[str]:
    return sorted(TESTS) if expected["echecs"] == "tous" else sorted(expected["echecs"])


@pytest.mark.parametrize(
    "sample",
    [
        "complete_vacuum",
        "complete",
        "graine",
        "sql_sans_foreign_keys",
        "user_states_sans_where",
        "fstring",
        "tables_supprimees",
        "synchrone",
    ],
)
def test_sample_gets_expected_verdicts(sample, sample_answers, expected_scores):
    evaluation = evaluate_source(sample_answers[sample])
    assert _failed(evaluation) == _want(expected_scores[sample])
    assert evaluation.score == expected_scores[sample]["score"]


def test_seed_answer_is_told_user_states_survive(sample_answers):
    v = evaluate_source(sample_answers["graine"]).verdicts
    assert v["sessions"].ok and v["orphelins"].ok and v["autres"].ok
    assert not v["user_states"].ok
    assert (
        "user_states" in v["user_states"].message
        and "supprimer ses sessions" in v["user_states"].message
    )


def test_endless_loop_hits_the_time_limit_and_leaves_no_process(tmp_path):
    marker = "987654.25"  # a unique sleep duration to find a leaked grandchild
    source = f'''
import subprocess
async def oublier(service, user_id):
    subprocess.Popen(["sleep", "{marker}"])
    while True:
        pass
'''
    start = time.monotonic()
    evaluation = evaluate_source(source, timeout=2)
    assert time.monotonic() - start < 2 + 20
    assert evaluation.timed_out and evaluation.score == 0
    assert "n'a pas terminé en 2 s" in evaluation.verdicts["sessions"].message
    leaked = subprocess.run(["pgrep", "-f", f"sleep {marker}"], capture_output=True, text=True)
    assert leaked.stdout == ""


def test_kernel_monkeypatching_does_not_reach_the_grader(monkeypatch, sample_answers):
    real_connect = sqlite3.connect
    monkeypatch.setattr(sqlite3, "connect", lambda *a, **k: real_connect(":memory:"))
    monkeypatch.setattr(subprocess, "run", lambda *a, **k: subprocess.CompletedProcess(a, 0, "{}"))
    monkeypatch.setattr(subprocess, "Popen", None)
    # A do-nothing answer stays at 0 and the seed's answer keeps its 7 points.
    assert evaluate_source(sample_answers["triche"]).score == 0
    assert evaluate_source(sample_answers["graine"]).score == 7


def test_extract_source_keeps_definitions_only():
    cell = """
import sqlite3
from pathlib import Path
%load_ext autoreload
LIMITE = 3
sqlite3.connect = None
async def oublier(service, user_id):
    return await aide(service)
def aide(service):
    return None
await oublier(service, "alice")
print("fini")
"""
    out = extract_source(cell)
    assert "async def oublier" in out and "def aide" in out and "LIMITE = 3" in out
    assert "import sqlite3" in out and "from pathlib import Path" in out
    assert "sqlite3.connect = None" not in out and "print" not in out
    assert "await oublier" not in out and "autoreload" not in out


def test_syntax_error_is_reported_in_french():
    evaluation = evaluate_source("async def oublier(service, user_id)\n    pass\n")
    assert evaluation.score == 0
    assert "SyntaxError" in evaluation.load_error and "ne se lit pas" in evaluation.load_error


def _module_function(tmp_path: Path, source: str, name: str):
    path = tmp_path / f"{name}.py"
    path.write_text("import sqlite3\nfrom course.tuteur import APP_NAME\n" + source)
    namespace: dict = {}
    exec(compile(path.read_text(), str(path), "exec"), namespace)
    return namespace["oublier"]


def test_noter_raises_a_french_assertion_and_verifier_reports(tmp_path, sample_answers, capsys):
    oublier = _module_function(tmp_path, sample_answers["graine"], "graine")
    noter(oublier, "sessions")
    with pytest.raises(AssertionError, match="user_states de l'élève existe encore"):
        noter(oublier, "user_states")
    verifier(oublier)
    out = capsys.readouterr().out
    assert "2/3 tests visibles réussis" in out and "✘" in out
    with pytest.raises(ValueError, match="Test inconnu"):
        noter(oublier, "inexistant")


def test_out_of_kernel_mode_leaves_grading_to_nbgrader(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv(ENV_OUT_OF_KERNEL, "1")
    oublier = _module_function(tmp_path, "async def oublier(service, user_id):\n    pass\n", "x")
    noter(oublier, "sessions")  # no evaluation, no error: the nbgrader hook grades
    assert "hors du noyau" in capsys.readouterr().out


def test_base_exemple_is_a_fresh_copy(tmp_path):
    path = course.labo.base_exemple(tmp_path / "exemple.db")
    conn = sqlite3.connect(path)
    users = conn.execute("SELECT app_name, user_id FROM user_states ORDER BY 1, 2").fetchall()
    counts = dict(
        conn.execute(
            "SELECT user_id, COUNT(*) FROM events WHERE app_name = 'tuteur' GROUP BY user_id"
        )
    )
    conn.execute("DELETE FROM sessions")
    conn.commit()
    conn.close()
    assert ("tuteur", "o'connor") in users and ("agenda", "alice") in users
    assert counts["alice"] == 24  # the seed's 20 + 2 demo events, and the profile session
    again = course.labo.base_exemple(tmp_path / "exemple.db")
    assert sqlite3.connect(again).execute("SELECT COUNT(*) FROM sessions").fetchone()[0] > 0
    data, digest = course.labo.fixture.fixture_bytes()
    assert again.read_bytes() == data and hashlib.sha256(data).hexdigest() == digest


def test_untouched_stub_says_not_written(tmp_path, sample_answers, capsys):
    oublier = _module_function(tmp_path, sample_answers["ebauche"], "ebauche")
    with pytest.raises(NotImplementedError, match="pas encore écrite"):
        noter(oublier, "sessions")
    verifier(oublier)  # the check cell itself does not fail: it says what to do
    assert "pas encore écrite" in capsys.readouterr().out
