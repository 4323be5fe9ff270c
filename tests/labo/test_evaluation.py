"""The TP's grading, out of process: rubric, diagnoses, time limit, cleanup, tamper resistance,
and the student's own check (``verifier``), which covers every criterion."""

from __future__ import annotations

import hashlib
import re
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest
from grade_attacks import GRADE_ATTACKS
from grading.nbgrader_ext.hidden import HIDDEN
from helpers import REPO, load_factor, tp_points

import course.labo
import course.labo.checks
from course.labo import criteria, noter, verifier
from course.labo.criteria import CRITERIA, TESTS
from course.labo.evaluate import evaluate_source, extract_source
from course.labo.scenario import VISIBLE

# the criteria table's count (course/labo/criteria.py), as the messages state it
N = len(CRITERIA)

# every automatic test of the TP passed: the criteria table's points (helpers.tp_points)
FULL = tp_points()[0]

SAMPLES = [
    "complete_vacuum",
    "complete",
    "graine",
    "sql_sans_foreign_keys",
    "user_states_sans_where",
    "fstring",
    "tables_supprimees",
    "synchrone",
    "exception",
    "alice_en_dur",
    "vacuum_avant_commit",
    # the tutor's service keeps its connection open: the learner's own close is not the last
    # one, so SQLite does not checkpoint the -wal for them, and closing the service is named
    "vacuum_sans_checkpoint",
    "service_ferme",
    # correct answers written otherwise: zeroed by secure_delete without VACUUM, and aiosqlite
    "secure_delete_sans_vacuum",
    "aiosqlite_vacuum",
    # parameterised, but compared by LIKE: told so, not that the id enters the SQL text
    "like_parametre",
    # VACUUM on a second connection while the first holds its DELETE: every call raises, the
    # first too, which is told rather than that a second call raises
    "vacuum_autre_connexion",
    "triche",
    # attacks on the grade itself (issue 18): their scores and the reason each one gets
    *GRADE_ATTACKS,
]


def _failed(evaluation) -> list[str]:
    return sorted(t for t, v in evaluation.verdicts.items() if not v.ok)


def _want(expected: dict) -> list[str]:
    return sorted(TESTS) if expected["echecs"] == "tous" else sorted(expected["echecs"])


@pytest.mark.parametrize("sample", SAMPLES)
def test_sample_gets_expected_verdicts(sample, graded_samples, expected_scores):
    evaluation = graded_samples[sample]
    assert _failed(evaluation) == _want(expected_scores[sample])
    assert evaluation.score == expected_scores[sample]["score"]
    assert evaluation.max_score == FULL
    for test_id, fragment in expected_scores[sample].get("messages", {}).items():
        assert fragment in evaluation.verdicts[test_id].message


def test_rubric_weighs_the_central_point_and_the_harm(graded_samples):
    # the seed's answer (sessions through the API, user_states left) misses the lesson's point
    assert graded_samples["graine"].score <= 5
    # erasing every learner's state is harm, not an erasure
    assert graded_samples["user_states_sans_where"].score <= 5
    # a complete erasure that leaves the bytes in the file's free pages still earns most points
    assert graded_samples["complete"].score >= 8
    assert graded_samples["complete_vacuum"].score == FULL


def test_seed_answer_is_told_user_states_survive(graded_samples):
    v = graded_samples["graine"].verdicts
    assert v["sessions"].ok and v["orphelins"].ok and v["autres"].ok
    assert not v["user_states"].ok
    assert "la ligne user_states de l'élève existe encore" in v["user_states"].message
    assert "supprimer ses sessions ne suffit pas" in v["user_states"].message
    # criteria 5 to 7 wait for a complete erasure, and say so
    assert "ce point ne compte que si oublier a d'abord effacé l'élève en entier" in (
        v["deux_fois"].message
    )


def test_open_transaction_is_diagnosed_not_taken_for_a_loop(graded_samples):
    evaluation = graded_samples["vacuum_avant_commit"]
    assert not evaluation.timed_out and evaluation.outcome()[0] == "graded"
    message = evaluation.verdicts["user_states"].message
    assert "VACUUM ne s'exécute pas dans une transaction ouverte\u00a0: validez-la" in message
    assert (
        "Votre connexion garde une transaction ouverte\u00a0: ce qu'elle a supprimé n'est pas "
        "validé" in message
    )
    # the DELETE was written, then rolled back: criterion 3 says so, not that it is missing;
    # the error that stopped the call before its commit comes first
    assert criteria.USER_STATE_ROLLED_BACK in message
    assert "supprimer ses sessions ne suffit pas" not in message
    for verdict in evaluation.verdicts.values():
        assert "boucle sans fin" not in verdict.message


LOCKED_BY_ITSELF = """
async def oublier(service, user_id):
    conn = sqlite3.connect(service.db_path)
    conn.execute("DELETE FROM user_states WHERE app_name = ? AND user_id = ?", (APP_NAME, user_id))
    for s in (await service.list_sessions(app_name=APP_NAME, user_id=user_id)).sessions:
        await service.delete_session(app_name=APP_NAME, user_id=user_id, session_id=s.id)
    conn.commit()
"""


@pytest.mark.slow
def test_a_call_waiting_for_its_own_lock_is_told_so_at_the_time_limit():
    """The service waits for the write lock the student's own connection holds: at the time
    limit, the message names that lock, not an endless loop."""
    # the service waits up to 20 s for that lock: any shorter limit stops it while it waits
    evaluation = evaluate_source(LOCKED_BY_ITSELF, timeout=6, sandboxed=True)
    assert evaluation.timed_out and evaluation.outcome()[0] == "timeout"
    message = evaluation.verdicts["sessions"].message
    assert message.startswith("oublier n'a pas terminé en 6\u00a0s\u00a0: elle attendait le verrou")
    assert "votre propre connexion (transaction ouverte, jamais validée" in message
    assert "boucle sans fin" not in message


@pytest.mark.parametrize("sandboxed", [True, False], ids=["bac-a-sable", "sans"])
@pytest.mark.slow
def test_endless_loop_hits_the_time_limit_and_leaves_no_process(sandboxed):
    marker = "987654.25" if sandboxed else "987654.5"  # a unique sleep to find a leak
    source = f'''
import os, subprocess
async def oublier(service, user_id):
    subprocess.Popen(["sleep", "{marker}"])
    while True:
        pass
'''
    start = time.monotonic()
    evaluation = evaluate_source(source, timeout=2, sandboxed=sandboxed)
    assert time.monotonic() - start < 2 + 20 * load_factor()  # stopped at 2 s, not left to run
    assert evaluation.timed_out and evaluation.score == 0
    assert evaluation.verdicts["sessions"].message == (
        "oublier n'a pas terminé en 2\u00a0s (boucle sans fin\u00a0? attente trop longue\u00a0?)"
        "\u00a0: ce point n'a pas pu être vérifié."
    )
    leaked = subprocess.run(["pgrep", "-f", f"sleep {marker}"], capture_output=True, text=True)
    assert leaked.stdout == ""


@pytest.mark.slow
def test_kernel_monkeypatching_does_not_reach_the_grader(monkeypatch, sample_answers):
    real_connect = sqlite3.connect
    monkeypatch.setattr(sqlite3, "connect", lambda *a, **k: real_connect(":memory:"))
    monkeypatch.setattr(subprocess, "run", lambda *a, **k: subprocess.CompletedProcess(a, 0, "{}"))
    monkeypatch.setattr(subprocess, "Popen", None)
    # A do-nothing answer stays at 0, the seed's answer keeps its visible point.
    assert evaluate_source(sample_answers["triche"]).score == 0
    graine = evaluate_source(sample_answers["graine"])
    assert (graine.score, graine.max_score) == (2, 3)


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
    assert evaluation.score == 0 and evaluation.outcome()[0] == "load_error"
    assert evaluation.load_error.startswith(
        "la cellule de oublier ne se lit pas (SyntaxError)\u00a0: "
    )


def _module_function(tmp_path: Path, source: str, name: str):
    path = tmp_path / f"{name}.py"
    path.write_text("import sqlite3\nfrom course.tuteur import APP_NAME\n" + source)
    namespace: dict = {}
    exec(compile(path.read_text(), str(path), "exec"), namespace)
    return namespace["oublier"]


def test_a_misspelt_table_in_a_with_block_is_told_as_the_error_it_is(tmp_path, capsys):
    """Second learner's walk, stop 59: « DELETE FROM user_state » (one letter missing) in the
    ``with conn:`` block rolled the whole block back, and criterion 3 said the DELETE « n'a pas
    été validée », sending the learner to add a commit that was there. The error is the cause:
    criterion 3 says so, and sends to the lesson section where an error rolls a block back."""
    source = (REPO / "grader" / "submissions" / "complete_vacuum.py").read_text()
    assert "DELETE FROM user_states" in source
    misspelt = source.replace("DELETE FROM user_states", "DELETE FROM user_state")
    # the block's DELETEs erase the sessions (not the API before it): the error rolls them back
    api = "    for session in reponse.sessions:\n"
    assert api in misspelt
    misspelt = misspelt.replace(api, "    for session in ():\n")
    verifier(_module_function(tmp_path, misspelt, "faute"))
    out = capsys.readouterr().out
    assert criteria.USER_STATE_ROLLED_BACK in out, out
    assert criteria.USER_STATE_NOT_COMMITTED not in out, out
    assert "la table «\u00a0user_state\u00a0» n'existe pas dans ce fichier" in out, out
    assert "section «\u00a05. Valider ou annuler une transaction\u00a0»" in out, out


FORGOT_COMMIT = """
async def oublier(service, user_id):
    conn = sqlite3.connect(service.db_path)
    try:
        conn.execute("PRAGMA foreign_keys = ON")
        for table in ("sessions", "user_states"):
            conn.execute(f"DELETE FROM {table} WHERE app_name = ? AND user_id = ?",
                         (APP_NAME, user_id))
    finally:
        conn.close()
"""
# the same DELETEs in a with block, one table misspelt, the error caught and dropped
HIDDEN_ERROR = """
async def oublier(service, user_id):
    conn = sqlite3.connect(service.db_path)
    try:
        with conn:
            for table in ("sessions", "user_state"):
                conn.execute(f"DELETE FROM {table} WHERE app_name = ? AND user_id = ?",
                             (APP_NAME, user_id))
    except sqlite3.Error:
        pass
    finally:
        conn.close()
"""


def test_a_forgotten_commit_before_close_is_told_as_a_transaction_never_validated(tmp_path, capsys):
    """Learner's walk, stop 59: the DELETEs written, conn.close() in a finally, no commit():
    criterion 3 said « supprimer ses sessions ne suffit pas » and sent the learner to the API
    section, word for word what an empty function gets; the hints too. The close is seen
    rolling back a transaction never validated, and criteria 1 and 3 and the hints say so."""
    verifier(_module_function(tmp_path, FORGOT_COMMIT, "sans_commit"))
    out = capsys.readouterr().out
    assert criteria.USER_STATE_NOT_COMMITTED in out, out
    sessions = f"{criteria.SESSIONS_LEFT}, et la transaction d'oublier n'a jamais été validée"
    assert sessions in out, out
    assert "supprimer ses sessions ne suffit pas" not in out, out
    assert "Bloqué sur une transaction jamais validée\u00a0?" in out, out


def test_an_error_hidden_by_a_try_except_is_not_told_as_a_missing_delete(tmp_path, capsys):
    """Learner's walk, stop 59: a misspelt table in the with block, its error caught by a
    try/except: nothing erased, no error raised; criterion 3 said « supprimer ses sessions ne
    suffit pas » while criterion 1, just above, said the sessions were still there."""
    verifier(_module_function(tmp_path, HIDDEN_ERROR, "cache"))
    out = capsys.readouterr().out
    assert criteria.USER_STATE_WITH_SESSIONS in out, out
    assert "supprimer ses sessions ne suffit pas" not in out, out


# the DELETEs in a with block, the second table misspelt, conn.close() after the block
CLOSE_AFTER_ERROR = """
async def oublier(service, user_id):
    conn = sqlite3.connect(service.db_path)
    conn.execute("PRAGMA foreign_keys = ON")
    with conn:
        conn.execute("DELETE FROM sessions WHERE app_name = ? AND user_id = ?",
                     (APP_NAME, user_id))
        conn.execute("DELETE FROM user_state WHERE app_name = ? AND user_id = ?",
                     (APP_NAME, user_id))
    conn.close()
"""

# the fourth learner's walk (h60b): an error before any row was deleted
UNAWAITED_FIRST_LINE = """
async def oublier(service, user_id):
    sessions = service.list_sessions(app_name=APP_NAME, user_id=user_id)
    for session in sessions.sessions:
        await service.delete_session(app_name=APP_NAME, user_id=user_id, session_id=session.id)
"""


def test_an_error_before_any_delete_is_not_told_as_a_rolled_back_transaction(tmp_path, capsys):
    """Fourth learner's walk (h60b): a service call without await on oublier's first line, or
    a misspelt table in its first DELETE, stopped the call before any row was deleted; criteria
    1 and 3 said « oublier s'est arrêtée sur l'erreur citée plus bas avant que cette suppression
    soit validée, et une transaction jamais validée est annulée, tout ce qu'elle avait supprimé
    compris » and sent the learner to the transactions (lesson 4, section 5), while the hints
    sent her to async def: no transaction was ever opened. The error is said as the cause, and
    where to look is the error's own note."""
    first_misspelt = CLOSE_AFTER_ERROR.replace("user_state WHERE", "user_states WHERE")
    first_misspelt = first_misspelt.replace("FROM sessions", "FROM event")
    for name, answer in (("sans_await", UNAWAITED_FIRST_LINE), ("premiere", first_misspelt)):
        verifier(_module_function(tmp_path, answer, name))
        out = capsys.readouterr().out
        assert criteria.USER_STATE_ROLLED_BACK not in out, out
        assert "une transaction jamais validée est annulée" not in out, out
        assert "5. Valider ou annuler une transaction" not in out, out
        for left in (criteria.SESSIONS_LEFT, criteria.USER_STATE_LEFT):
            stopped = f"{left}\u00a0: oublier s'est arrêtée sur l'erreur citée plus bas avant"
            said = f"{stopped} d'avoir rien supprimé avec sqlite3. Corrigez d'abord cette erreur."
            assert said in out, out
    assert "la table «\u00a0event\u00a0» n'existe pas dans ce fichier" in out, out
    # the sessions erased by the API, the block's DELETEs matching no row: none rolled back
    source = (REPO / "grader" / "submissions" / "complete_vacuum.py").read_text()
    misspelt = source.replace("DELETE FROM user_states", "DELETE FROM user_state")
    verifier(_module_function(tmp_path, misspelt, "api_puis_faute"))
    out = capsys.readouterr().out
    assert "✔ 1. Toutes les sessions" in out, out
    stopped = f"{criteria.USER_STATE_LEFT}\u00a0: oublier s'est arrêtée sur l'erreur citée"
    assert f"{stopped} plus bas avant d'avoir rien supprimé avec sqlite3." in out, out


def test_a_close_skipped_by_an_error_is_told_as_such(tmp_path, capsys):
    """Fourth learner's walk (h60b): conn.close() written after the with block, the block
    stopped by a misspelt table: the note said « oublier ne ferme pas une connexion sqlite3
    qu'elle ouvre (un bloc with valide la transaction, il ne ferme pas la connexion) », to a
    learner who wrote close(); the error skipped it. The note says so, and what runs anyway."""
    verifier(_module_function(tmp_path, CLOSE_AFTER_ERROR, "ferme_apres"))
    out = capsys.readouterr().out
    assert criteria.UNCLOSED not in out, out
    assert "un bloc with valide la transaction, il ne ferme pas la connexion" not in out, out
    assert criteria.UNCLOSED_AFTER_ERROR in out, out
    assert "la table «\u00a0user_state\u00a0» n'existe pas dans ce fichier" in out, out


def test_a_connection_never_closed_is_told_even_when_every_criterion_holds(tmp_path, capsys):
    """Learner's walk, stop 59: the right erasure with its connection never closed (« with
    conn: » taken for a close) got 7/7 and no remark, while the TP asks to close every
    connection opened: the criteria hold, and the note says what is left to fix."""
    source = (REPO / "grader" / "submissions" / "complete_vacuum.py").read_text()
    assert source.count("        conn.close()\n") == 1
    unclosed = source.replace("        conn.close()\n", "        pass\n")
    verifier(_module_function(tmp_path, unclosed, "ouverte"))
    out = capsys.readouterr().out
    assert "7/7 critères respectés" in out, out
    note = criteria.UNCLOSED.removeprefix("De plus, ")
    assert f"reste à corriger\u00a0: {note}" in out, out
    # the control: the same erasure, closed, gets no note
    verifier(_module_function(tmp_path, source, "fermee"))
    assert "reste à corriger" not in capsys.readouterr().out


def test_verifier_says_an_exception_raised_on_both_example_bases_once(tmp_path, capsys):
    """The file deleted twice: the same FileNotFoundError on each example base, whose messages
    differ only by the base's name, makes one « Pour tout l'appel » line, not two."""
    source = "import os\n\nasync def oublier(service, user_id):\n    os.remove(service.db_path)\n"
    verifier(_module_function(tmp_path, source + "    os.remove(service.db_path)\n", "deux"))
    out = capsys.readouterr().out
    assert "la base de données n'existe plus après oublier" in out
    assert out.count("Pour tout l'appel\u00a0: oublier a levé FileNotFoundError") == 1, out


def test_all_criteria_held_with_a_service_call_left_unawaited_says_which(
    tmp_path, sample_answers, capsys
):
    """Learner's walk, stop 57: the full answer with ``service.delete_session(...)`` left
    without await (its SQL erased the sessions anyway) gave « 7/7 critères respectés », then
    « Bloqué sur une fonction asynchrone ? indice(1)… », and no line said what was wrong. The
    cause is now said under the count; the full answer says nothing of it (the control)."""
    answer = sample_answers["complete_vacuum"]
    slip = answer.replace("await service.delete_session", "service.delete_session", 1)
    assert slip != answer
    verifier(_module_function(tmp_path, slip, "sans_await"))
    out = capsys.readouterr().out
    assert f"{N}/{N} critères respectés" in out, out
    assert (
        "⚠ Les critères tiennent, mais ceci reste à corriger\u00a0: un appel au service n'a pas "
        "été attendu (coroutine jamais attendue)"
    ) in out, out
    assert "Bloqué sur une fonction asynchrone" in out
    verifier(_module_function(tmp_path, answer, "complet"))
    out = capsys.readouterr().out
    assert f"{N}/{N} critères respectés" in out and "⚠" not in out and "Bloqué" not in out, out


def test_noter_raises_a_french_assertion_and_verifier_reports(tmp_path, sample_answers, capsys):
    course.labo.checks._told.clear()
    oublier = _module_function(tmp_path, sample_answers["graine"], "graine")
    noter(oublier, "sessions")
    with pytest.raises(AssertionError, match="user_states de l'élève existe encore"):
        noter(oublier, "user_states")
    told = capsys.readouterr().out
    assert told.count("Vérification sans bac à sable\u00a0:") == 1
    verifier(oublier)
    out = capsys.readouterr().out
    assert "Vérification sans bac à sable" not in out  # said once per kernel, not per call
    lines = [line for line in out.splitlines() if line.startswith(("✔ ", "✘ "))]
    assert [line[2:] for line in lines] == [f"{c.number}. {c.title}" for c in CRITERIA]
    assert [line[0] for line in lines] == ["✔", "✔", "✘", "✔", "✘", "✘", "✘"]
    assert f"3/{N} critères respectés sur la base d'exemple" in out
    with pytest.raises(ValueError, match="Test inconnu"):
        noter(oublier, "inexistant")


def test_verifier_checks_every_criterion_on_the_example(graded_samples):
    """Each criterion fails visibly for some common mistake: the student can self-check all 7."""
    failing = set()
    for sample in ("triche", "sql_sans_foreign_keys", "graine", "user_states_sans_where"):
        verdicts = graded_samples[sample].criteria[VISIBLE.name]
        failing |= {key for key, verdict in verdicts.items() if not verdict.ok}
    assert failing == {c.key for c in CRITERIA}
    assert all(v.ok for v in graded_samples["complete_vacuum"].criteria[VISIBLE.name].values())


def test_hidden_tests_are_not_computed_where_students_run(tmp_path, sample_answers, capsys):
    evaluation = evaluate_source(sample_answers["graine"])
    assert set(evaluation.verdicts) == {t.id for t in TESTS.values() if t.visible}
    assert set(evaluation.results) == {VISIBLE.name}
    oublier = _module_function(tmp_path, sample_answers["graine"], "graine_cache")
    with pytest.raises(AssertionError, match="Test caché"):  # never passes in a kernel
        noter(oublier, "orphelins")


def test_hidden_verdicts_never_name_hidden_inputs(graded_samples):
    hidden_words = {HIDDEN.learner, HIDDEN.unknown, HIDDEN.quoted, *HIDDEN.hostile}
    hidden_words |= {"maelle", "artagnan", "Girard", "personne-7", *HIDDEN.personal_data}
    hidden_words |= {learner.user_id for learner in HIDDEN.extra_learners}
    for sample in SAMPLES:
        for test_id, verdict in graded_samples[sample].verdicts.items():
            for word in hidden_words:
                assert word not in verdict.message, (sample, test_id, word)


HIDDEN_TEST_IDS = [t.id for t in TESTS.values() if not t.visible]
# What a student can set from a cell of their notebook to look like the grading process.
FORGED_ENV = {
    "COURSE_LABO_GRADED_OUT_OF_KERNEL": "1",  # the variable noter used to trust
    "NBGRADER_EXECUTION": "validate",
    "COURSE_GRADING_NO_SANDBOX": "1",
}


@pytest.mark.parametrize("test_id", HIDDEN_TEST_IDS)
def test_noter_never_passes_a_hidden_test_outside_grading(
    test_id, monkeypatch, tmp_path, sample_answers
):
    """Whatever the environment says, a hidden test called in a notebook fails, even for a
    complete answer: only the grading hooks compute it, out of the kernel."""
    oublier = _module_function(tmp_path, sample_answers["complete_vacuum"], f"c_{test_id}")
    for env in ({}, FORGED_ENV):
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        with pytest.raises(AssertionError) as failed:
            noter(oublier, test_id)
        assert "Test caché" in str(failed.value) and "échoue toujours" in str(failed.value)


def test_in_an_autograde_kernel_noter_fails_and_verifier_starts_nothing(
    monkeypatch, tmp_path, capsys
):
    """A kernel nbgrader starts for autograde (NBGRADER_EXECUTION=autograde): the hooks keep every
    cell of the TP out of it, so if one ever runs there, its tests fail and verifier starts no
    process (a visible test that passes elsewhere fails here; setting the variable only turns a
    student's own checks off)."""
    monkeypatch.setattr(course.labo.checks, "_cache", {})
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    marker = tmp_path / "lance"
    source = f"async def oublier(service, user_id):\n    open({str(marker)!r}, 'w').write('x')\n"
    oublier = _module_function(tmp_path, source, "autograde_kernel")
    for test_id in TESTS:
        with pytest.raises(AssertionError, match="Notation en cours"):
            noter(oublier, test_id)
    verifier(oublier)
    assert "non lancée pendant la notation" in capsys.readouterr().out
    assert not marker.exists()  # no evaluation ran (it would have called oublier)
    monkeypatch.delenv("NBGRADER_EXECUTION")
    verifier(oublier)  # the learner's own check still runs (the control)
    assert marker.exists()


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
    out = capsys.readouterr().out
    assert "✘ oublier n'est pas encore écrite" in out and f"0/{N} critères" in out


FRENCH_TYPOGRAPHY_ERRORS = re.compile(r" [:;?!]|[«][^\u00a0]|[^\u00a0][»]|`")


def test_messages_follow_french_typography_and_carry_no_markdown(graded_samples):
    from course.labo import criteria

    texts = [c.failure for c in CRITERIA] + [c.hidden_hint for c in CRITERIA]
    texts += list(criteria.GATE_MESSAGES.values())
    texts += [criteria.NOT_WRITTEN, criteria.NOT_ASYNC, criteria.OPEN_TRANSACTION]
    texts += [criteria.QUOTED_GATE, criteria.NO_AWAIT, criteria.RAISES_FOR_EVERYONE]
    texts += [
        criteria.SERVICE_CLOSED,
        criteria.STRAY_FILES,
        criteria.UNAWAITED,
        criteria.OTHER_CELL,
    ]
    texts += [course.labo.checks.NO_SANDBOX_NOTE]
    for sample in SAMPLES:
        texts += [v.message for v in graded_samples[sample].verdicts.values()]
        texts.append(graded_samples[sample].outcome()[1])
    for text in texts:
        # a student's exception message is quoted as is: judge only our own words
        own = re.sub(r"oublier a levé \w+\u00a0: .*?(\.( |$)|$)", "", text)
        assert not FRENCH_TYPOGRAPHY_ERRORS.search(own), text
        assert "relancez" not in text.lower(), text  # read after the deadline too


# what a message may not say: the commands themselves (the hint ladder, course.hints, does)
COMMANDS = re.compile(r"PRAGMA|wal_checkpoint|DELETE FROM|commit\(\)|close\(\)|terminez par VACUUM")
WHERE = re.compile(r"Où regarder\u00a0: leçon (\d), section «\u00a0([^»]+)\u00a0»")


def _sections(lesson: str) -> set[str]:
    import nbformat

    path = next((REPO / "solutions" / "lecons").glob(f"0{lesson}_*.ipynb"))
    return {
        line.lstrip("#").strip().replace("`", "")
        for cell in nbformat.read(path, as_version=4).cells
        if cell.cell_type == "markdown"
        for line in cell.source.splitlines()
        if line.startswith("#")
    }


def test_failure_messages_say_where_to_look_never_the_commands():
    from course.labo import criteria

    texts = [c.failure for c in CRITERIA]
    texts += [
        criteria.OPEN_TRANSACTION,
        criteria.USER_STATE_NOT_COMMITTED,
        criteria.USER_STATE_ROLLED_BACK,
        criteria.USER_STATE_WITH_SESSIONS,
    ]
    for text in texts:
        assert not COMMANDS.search(text), text
        where = WHERE.search(text)
        assert where, text
        assert where.group(2) in _sections(where.group(1)), where.groups()
    # the control: the message criterion 7 had is caught by the same check
    assert COMMANDS.search("terminez par VACUUM puis PRAGMA wal_checkpoint(TRUNCATE).")


def test_verifier_says_each_cause_once(tmp_path, sample_answers, capsys):
    """A VACUUM before commit: the open transaction is told once for the whole call, and the
    criteria that only wait for a complete erasure say so once (not the same text four times)."""
    oublier = _module_function(tmp_path, sample_answers["vacuum_avant_commit"], "vac")
    verifier(oublier)
    out = capsys.readouterr().out
    assert out.count("garde une transaction ouverte") == 1
    assert out.count("ce point ne compte que si oublier a d'abord effacé l'élève en entier") == 1
    # criterion 6 waits for criteria 1 to 4 too: the same cause, said once
    assert out.count("(même cause que plus haut)") == 2
    assert "contient une apostrophe" not in out  # not the quotes' fault
    assert "Pour tout l'appel\u00a0: oublier a levé OperationalError" in out
    assert criteria.USER_STATE_ROLLED_BACK in out
    assert "Bloqué sur une transaction jamais validée\u00a0? indice(1)" in out
    # the control: each criterion's own message is in the verdicts, repeated there
    verdicts = evaluate_source(sample_answers["vacuum_avant_commit"]).criteria[VISIBLE.name]
    messages = [v.message for v in verdicts.values()]
    assert sum("garde une transaction ouverte" in m for m in messages) >= 2


@pytest.mark.parametrize(
    ("slip", "change", "failed", "said"),
    [
        # a name written in: criteria 1 to 4 hold on alice, criterion 6's gate must not say so
        (
            "alice-en-dur",
            lambda right: right.replace("(APP_NAME, user_id)", '(APP_NAME, "alice")'),
            {"guillemets": "c'est le cas de celui des critères 1 à 4, pas d'un élève dont"},
            None,
        ),
        # every application's rows: criterion 4 fails, and 6 waits for 1 to 4 as the TP says
        (
            "toutes-les-applications",
            lambda right: right.replace("app_name = ? AND user_id = ?", "user_id = ?").replace(
                "(APP_NAME, user_id)", "(user_id,)"
            ),
            {"autres": "pas à cet élève", "guillemets": "effacé l'élève en entier et rien d'autre"},
            None,
        ),
        # an error raised after a right erasure: not the quotes' fault
        (
            "erreur-a-la-fin",
            lambda right: right + '    raise RuntimeError("journal introuvable")\n',
            {"guillemets": "ce n'est pas une affaire d'apostrophe", "deux_fois": ""},
            None,
        ),
        # the forgotten await: named, whatever the criterion
        (
            "await-oublie",
            lambda right: right.replace("await service.list_sessions", "service.list_sessions"),
            {},
            "Un appel au service sans await renvoie une coroutine",
        ),
        # a forgotten await on delete_session, the API alone erasing: nothing raised, nothing
        # deleted, Python only warns; the sessions criterion fails and says why (helper attack)
        (
            "delete-sans-await",
            lambda right: "".join(right.splitlines(True)[:5]).replace(
                "await service.delete_session", "service.delete_session"
            ),
            {"sessions": ""},
            "n'a pas été attendu (coroutine jamais attendue)",
        ),
        # the same call scheduled and never awaited (a task), or kept in a list and never
        # started, where Python never warns: named all the same, and the call's work stopped
        # at its end, in verifier as in grading (attack, stop 53: timing decided the verdict)
        (
            "ensure-future-sans-await",
            lambda right: (
                "import asyncio\n"
                + "".join(right.splitlines(True)[:5])
                .replace(
                    "await service.delete_session(", "asyncio.ensure_future(service.delete_session("
                )
                .replace("session.id)\n", "session.id))\n")
            ),
            {"sessions": ""},
            "n'a pas été attendu (coroutine jamais attendue)",
        ),
        # a task whose cancellation copies the base: what it does as the call ends
        # is judged with the call (attack, stop 53: verifier gave 7/7, the copy left behind)
        (
            "copie-a-l-annulation",
            lambda right: (
                "import asyncio\nimport shutil\n"
                + right.replace(
                    "    reponse = await",
                    "    async def _garder(chemin):\n"
                    "        try:\n            await asyncio.sleep(3600)\n"
                    "        finally:\n"
                    "            shutil.copy(chemin, 'copie-' + user_id + '.db')\n"
                    "    asyncio.ensure_future(_garder(service.db_path))\n"
                    "    reponse = await",
                    1,
                )
            ),
            {"fichier": "d'autres fichiers que la base"},
            "n'a pas été attendu (coroutine jamais attendue)",
        ),
        (
            "liste-de-coroutines",
            lambda right: (
                "_attente = []\n"
                + "".join(right.splitlines(True)[:5])
                .replace("await service.delete_session(", "_attente.append(service.delete_session(")
                .replace("session.id)\n", "session.id))\n")
            ),
            {"sessions": ""},
            "n'a pas été attendu (coroutine jamais attendue)",
        ),
        # a misspelt attribute of the learner's own connection: Python's words, not the
        # checker's class name (helper attack: « '_WatchedConnection' object… »)
        (
            "attribut-mal-ecrit",
            lambda right: right + "    conn.total_change\n",
            {"deux_fois": ""},
            "'sqlite3.Connection' object has no attribute 'total_change'",
        ),
    ],
    ids=lambda v: v if isinstance(v, str) and " " not in v and len(v) < 30 else "",
)
def test_a_learners_slip_gets_the_diagnosis_of_that_slip(
    slip, change, failed, said, sample_answers
):
    """Helper attack (a learner's path): a name written in was told « critères 1 à 4 » failed
    while they all held; the rows of every application got criterion 6; an error raised after
    the erasure was blamed on SQL quoting; a forgotten await was never named, and on
    delete_session, where nothing is raised, not even noticed."""
    source = change(sample_answers["complete_vacuum"])  # the right answer, one slip added
    assert source != sample_answers["complete_vacuum"]
    evaluation = evaluate_source(source)
    verdicts = evaluation.criteria[VISIBLE.name]
    for key, fragment in failed.items():
        assert not verdicts[key].ok, (slip, key)
        assert fragment in verdicts[key].message, (slip, verdicts[key].message)
    if slip == "alice-en-dur":
        assert all(verdicts[k].ok for k in ("sessions", "orphelins", "user_states", "autres"))
    if said:
        assert said in evaluation.outcome()[1] or any(said in v.message for v in verdicts.values())


def test_a_copy_left_in_tmp_costs_the_same_point_in_verifier_as_in_grading(sample_answers):
    """Helper attack (a learner's path): a copy « just in case » in /tmp got 7/7 from
    verifier, which never looked at the machine's shared /tmp, and lost criterion 7 in grading,
    where /tmp is the sandbox's own. The check now counts what the call itself wrote there, and
    only that: other processes writing /tmp at the same time (here, this test) change nothing."""
    import threading
    import uuid

    copy = Path("/tmp") / f"sauvegarde-avant-oubli-{uuid.uuid4().hex}.db"
    right = sample_answers["complete_vacuum"]
    opened = "    conn = sqlite3.connect(service.db_path)\n"
    assert opened in right
    ways = {  # a copy « just in case », as a file, as SQLite's own copy, as an attached base
        "shutil": f'    import shutil\n    shutil.copy(service.db_path, "{copy}")\n' + opened,
        "vacuum-into": opened + f'    conn.execute("VACUUM INTO ?", ("{copy}",))\n',
        "attach": opened + f'    conn.execute("ATTACH DATABASE ? AS copie", ("{copy}",))\n'
        '    conn.execute("CREATE TABLE copie.t AS SELECT * FROM events")\n'
        '    conn.execute("DETACH DATABASE copie")\n',
    }
    stop, others = threading.Event(), []

    def another_process_writing_tmp() -> None:  # what a busy machine does meanwhile
        while not stop.is_set():
            path = Path("/tmp") / f"autre-{uuid.uuid4().hex}"
            path.write_bytes(b"x")
            others.append(path)
            time.sleep(0.01)

    writer = threading.Thread(target=another_process_writing_tmp)
    writer.start()
    try:
        for way, added in ways.items():
            slip = right.replace(opened, added, 1)
            for sandboxed in (False, True):
                evaluation = evaluate_source(slip, sandboxed=sandboxed)
                verdict = evaluation.criteria[VISIBLE.name]["fichier"]
                assert not verdict.ok and "d'autres fichiers que la base" in verdict.message, (
                    way,
                    sandboxed,
                    verdict.message,
                )
                copy.unlink(missing_ok=True)
        control = evaluate_source(right).criteria[VISIBLE.name]["fichier"]
        assert control.ok, control.message
    finally:
        stop.set()
        writer.join()
        copy.unlink(missing_ok=True)
        for path in others:
            path.unlink(missing_ok=True)
    assert others  # the control ran beside the checks


def test_a_copy_left_in_dev_shm_costs_criterion_7_in_verifier_too(sample_answers):
    """Helper attack: a copy in /dev/shm (shared memory, a tmpfs every Linux has) got 10/10
    from verifier, which watched /tmp only; in grading, the sandbox's /dev has no shm and the
    copy fails. verifier now watches /dev/shm as /tmp: criterion 7 is lost there too."""
    import uuid

    copy = Path("/dev/shm") / f"copie-{uuid.uuid4().hex}.db"
    right = sample_answers["complete_vacuum"]
    opened = "    conn = sqlite3.connect(service.db_path)\n"
    slip = right.replace(
        opened, f'    import shutil\n    shutil.copy(service.db_path, "{copy}")\n' + opened, 1
    )
    try:
        for sandboxed in (False, True):
            verdict = evaluate_source(slip, sandboxed=sandboxed).criteria[VISIBLE.name]["fichier"]
            assert not verdict.ok, (sandboxed, verdict.message)
            copy.unlink(missing_ok=True)
    finally:
        copy.unlink(missing_ok=True)


CHECKPOINT = '        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")     # et le -wal vidé\n'
END = "    finally:\n        conn.close()\n"
BYPASSES = {
    # a task closes the service once oublier has returned, as asyncio.run() ends
    "fermeture-differee": (
        "import asyncio\n\n\nasync def _plus_tard(service):\n    try:\n"
        "        await asyncio.sleep(3600)\n    finally:\n        await service.close()\n\n\n",
        "",
        "    asyncio.get_running_loop().create_task(_plus_tard(service))\n",
    ),
    # the service's connection closed through its private attribute, the service never closed
    "connexion-du-service": (
        "",
        "",
        "    c, service._conn = service._conn, None\n    if c is not None:\n"
        "        await c.close()\n",
    ),
    # the -wal copied into the file, then deleted under the service (its readers then fail)
    "wal-supprime": (
        "import os\n\n\n",
        '        conn.execute("PRAGMA wal_checkpoint(FULL)")\n',
        '    os.unlink(str(service.db_path) + "-wal")\n',
    ),
}


@pytest.mark.parametrize("sandboxed", [False, True], ids=["verifier", "bac-a-sable"])
@pytest.mark.parametrize("bypass", sorted(BYPASSES))
def test_the_wal_emptied_by_anything_but_oublier_loses_criterion_7(
    bypass, sandboxed, sample_answers
):
    """Helper attack on the runner: with the service's connection open, a learner's own close
    no longer empties the -wal; then a task closing the service after oublier returned, the
    service's connection closed by hand, or the -wal deleted under it got 7/7 without emptying
    it. The call's process ends closing nothing: a -wal gone is one of those. A task left
    running is stopped when oublier returns (stop 53), what it does then judged with the call,
    and it is named as work oublier never awaited."""
    before, checkpoint, after = BYPASSES[bypass]
    right = sample_answers["complete_vacuum"]
    assert CHECKPOINT in right and right.endswith(END)
    source = before + right.replace(CHECKPOINT, checkpoint).removesuffix(END) + END + after
    verdict = evaluate_source(source, sandboxed=sandboxed).criteria[VISIBLE.name]["fichier"]
    assert not verdict.ok, (bypass, sandboxed)
    if bypass == "fermeture-differee":  # the task, stopped as oublier returns, is named
        assert "un appel au service n'a pas été attendu" in verdict.message, verdict.message
        return
    assert "a fermé le service ou sa connexion (service.close()), ou supprimé son -wal" in (
        verdict.message
    )


AUTOCOMMIT_OFF = """
async def oublier(service, user_id):
    reponse = await service.list_sessions(app_name=APP_NAME, user_id=user_id)
    for session in reponse.sessions:
        await service.delete_session(app_name=APP_NAME, user_id=user_id, session_id=session.id)
    conn = sqlite3.connect(service.db_path, autocommit=False)
    try:
        conn.execute("DELETE FROM user_states WHERE app_name = ? AND user_id = ?",
                     (APP_NAME, WHO))
        TAIL
    finally:
        conn.close()
"""
WAL_EMPTIED = "conn.execute('PRAGMA wal_checkpoint(TRUNCATE)')"
CHECK_IN_LEARNER_ENV = """
import sqlite3, sys
from pathlib import Path
from course.labo import verifier
path = Path(sys.argv[1])
namespace = {}
exec(compile(path.read_text(), str(path), "exec"), namespace)
verifier(namespace["oublier"])
"""


@pytest.mark.slow
@pytest.mark.parametrize(
    ("tail", "said"),
    [
        (["conn.commit()", "conn.autocommit = True", "conn.execute('VACUUM')", WAL_EMPTIED], "7/7"),
        (["conn.commit()", "conn.execute('VACUUM')", WAL_EMPTIED], "autocommit"),
        (["pass"], "not_committed"),
        (["conn.commit()"], "not_erased"),
    ],
    ids=["commit_then_autocommit", "vacuum_in_its_transaction", "no_commit", "wrong_row"],
)
def test_autocommit_false_is_judged_as_python_runs_it(tmp_path, tail, said):
    """Python 3.12+'s autocommit=False, the sqlite3 docs' advice, in the learner's Python:
    a new transaction begins at each commit, so a committed erasure closed was told as rolled
    back, and a VACUUM after commit() was told « validez-la d'abord (commit) », which they did.
    Committed, it is judged right (a wrong row committed is not told as never validated); the
    VACUUM refusal says what autocommit=False does; a transaction never committed still is."""
    from learner_env import learner_env

    source = AUTOCOMMIT_OFF.replace("TAIL", "\n        ".join(tail))
    # the wrong row: nothing deleted, and committed: not a transaction never validated
    source = source.replace("WHO", "user_id.upper()" if said == "not_erased" else "user_id")
    (tmp_path / "autocommit.py").write_text(
        "import sqlite3\nfrom course.tuteur import APP_NAME\n" + source, encoding="utf-8"
    )
    (tmp_path / "check.py").write_text(CHECK_IN_LEARNER_ENV, encoding="utf-8")
    run = subprocess.run(
        [str(learner_env().python), "check.py", "autocommit.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    out = run.stdout
    assert run.returncode == 0, run.stderr[-2000:]
    if said == "7/7":
        assert "7/7 critères respectés" in out and "reste à corriger" not in out, out
    elif said == "autocommit":
        assert criteria.AUTOCOMMIT_OFF in out, out
        assert criteria.USER_STATE_NOT_COMMITTED not in out, out
    elif said == "not_erased":
        assert "la ligne user_states de l'élève existe encore" in out, out
        assert criteria.USER_STATE_NOT_COMMITTED not in out, out
    else:
        assert criteria.USER_STATE_NOT_COMMITTED in out, out


def test_vacuum_before_commit_says_each_thing_once():
    """The sample vacuum_avant_commit (a default connection): the VACUUM refusal is quoted, the
    open transaction named without saying VACUUM again, the lesson section given once, and
    nothing about autocommit=False, which it never used."""
    source = (REPO / "grader" / "submissions" / "vacuum_avant_commit.py").read_text()
    evaluation = evaluate_source("import sqlite3\nfrom course.tuteur import APP_NAME\n" + source)
    message = evaluation.verdicts["user_states"].message
    assert message.count("VACUUM") == 1, message
    assert message.count(criteria.SEE_TRANSACTION) == 1, message
    assert criteria.OPEN_AFTER_VACUUM.removesuffix(criteria.SEE_TRANSACTION).strip() in message
    assert "autocommit" not in message, message


WATCHED_IN_LEARNER_ENV = """
import sqlite3
from course.labo.submission_runner import _WatchedConnection
conn = sqlite3.connect(":memory:", factory=_WatchedConnection, autocommit=False)
conn.execute("CREATE TABLE t (x)")
said = []
with conn:  # commits at its end, without calling commit()
    conn.execute("INSERT INTO t VALUES (1)")
said.append(conn.unvalidated())
conn.execute("INSERT INTO t VALUES (2)")
said.append(conn.unvalidated())
conn.commit()
said.append(conn.unvalidated())
print(said)
"""


@pytest.mark.slow
def test_a_with_block_validates_an_autocommit_false_connection(tmp_path):
    """The review of stop 60: ``with conn:`` commits without calling commit(), so an
    autocommit=False connection validated by a with block was still told as holding changes
    never validated. In the learner's Python (autocommit is 3.12+)."""
    from learner_env import learner_env

    run = subprocess.run(
        [str(learner_env().python), "-c", WATCHED_IN_LEARNER_ENV],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.stdout.strip() == "[False, True, False]", run.stdout + run.stderr[-2000:]
