"""What a student sees in JupyterLab when a lab cell fails: French sentences only, never the
grader's internal frames, and still an error (nbgrader gives 0 to a cell that fails).

The student version runs in a real kernel (nbclient), as JupyterLab would run it."""

from __future__ import annotations

import re
import time

import nbformat
import pytest
from grading.samples import build_submission
from helpers import REPO
from learner_env import cell_answer, learner_kernel, run_cell
from nbclient import NotebookClient

from course.labo.criteria import CRITERIA, OTHER_CELL, TESTS
from course.labo.evaluate import evaluate_source
from course.labo.partage import NOT_WRITTEN, PARTAGE_TESTS, verifier_partage

# the criteria table's count (course/labo/criteria.py), as the messages state it
N = len(CRITERIA)

ANSI = re.compile(r"\x1b\[[0-9;]*m")
INTERNALS = ("course/labo", "Traceback", "File ", "----> ", "Cell In", "noter(oublier")


def _run(nb: nbformat.NotebookNode, workdir) -> dict[str, nbformat.NotebookNode]:
    """Execute `nb` in a fresh python3 kernel in `workdir`; cells by id."""
    NotebookClient(
        nb,
        timeout=120,
        kernel_name="python3",
        allow_errors=True,
        resources={"metadata": {"path": str(workdir)}},
    ).execute()
    return {c.id: c for c in nb.cells}


def _shown(cell) -> str:
    """What the front end shows for a cell's error: its traceback lines, without colours."""
    errors = [o for o in cell.outputs if o.output_type == "error"]
    assert len(errors) == 1, cell.outputs
    return ANSI.sub("", "\n".join(errors[0].traceback))


def _printed(cell) -> str:
    return "".join(o.text for o in cell.outputs if o.output_type == "stream")


@pytest.fixture(scope="module")
def stub_cells(tmp_path_factory) -> dict[str, nbformat.NotebookNode]:
    work = tmp_path_factory.mktemp("ebauche")
    nb = nbformat.read(REPO / "notebooks" / "oublier" / "oublier.ipynb", as_version=4)
    return _run(nb, work)


@pytest.fixture(scope="module")
def seed_answer_cells(tmp_path_factory) -> dict[str, nbformat.NotebookNode]:
    work = tmp_path_factory.mktemp("graine")
    answer = (REPO / "grader" / "submissions" / "graine.py").read_text(encoding="utf-8")
    nb = build_submission(REPO / "notebooks" / "oublier" / "oublier.ipynb", answer)
    return _run(nb, work)


@pytest.mark.parametrize("cell_id", ["test-sessions", "test-user-states", "test-autres"])
@pytest.mark.slow
def test_untouched_stub_shows_one_french_sentence(stub_cells, cell_id):
    cell = stub_cells[cell_id]
    error = next(o for o in cell.outputs if o.output_type == "error")
    shown = _shown(cell)
    assert "oublier n'est pas encore écrite" in shown
    assert "remplacez «\u00a0raise NotImplementedError()\u00a0» par votre code" in shown
    for internal in INTERNALS:
        assert internal not in shown, shown
    # nbgrader scores the error; tests/browser accepts it because it names NotImplementedError
    assert "NotImplementedError" in error.ename + error.evalue
    assert not re.search(r"NotImplementedError:\s*$", error.evalue)


def test_verifier_reports_the_stub_in_french(stub_cells):
    cell = stub_cells["verifier"]
    assert not [o for o in cell.outputs if o.output_type == "error"]
    out = _printed(cell)
    assert "oublier n'est pas encore écrite" in out and f"0/{N} critères respectés" in out


@pytest.mark.slow
def test_failed_test_shows_what_is_missing_without_internals(seed_answer_cells):
    assert not [o for o in seed_answer_cells["test-sessions"].outputs if o.output_type == "error"]
    shown = _shown(seed_answer_cells["test-user-states"])
    assert "la ligne user_states de l'élève existe encore" in shown
    assert "Sa ligne user_states (l'état user:) a disparu" in shown
    for internal in INTERNALS:
        assert internal not in shown, shown
    out = _printed(seed_answer_cells["verifier"])
    assert f"3/{N} critères respectés" in out and "✘ 3. Sa ligne user_states" in out
    # verifier's cell runs the first evaluation of this kernel: it says, once, how it runs
    assert out.count("Vérification sans bac à sable") == 1
    # where to look, and the hint ladder, never the command
    section = "«\u00a01. Supprimer toutes les sessions par l'API\u00a0»"
    assert f"Où regarder\u00a0: leçon 4, section {section}" in out
    assert "Bloqué sur la ligne user_states (critère 3)\u00a0? indice(1)" in out
    assert "DELETE FROM" not in out and "PRAGMA" not in out


def test_graded_messages_for_the_stub_say_what_to_do(graded_samples):
    """In the autograded notebook and its feedback: no "levé NotImplementedError: " and nothing."""
    verdicts = graded_samples["ebauche"].verdicts
    assert set(verdicts) == set(TESTS)
    for verdict in verdicts.values():
        assert not verdict.ok
        assert not re.search(r"[:：]\s*$", verdict.message), verdict.message
        assert "pas encore écrite" in verdict.message


def test_an_error_without_message_is_named_without_a_dangling_colon():
    source = "async def oublier(service, user_id):\n    raise KeyError\n"
    verdicts = evaluate_source(source).verdicts
    assert verdicts["sessions"].message.endswith("De plus, oublier a levé KeyError.")
    assert not any("KeyError:" in v.message for v in verdicts.values())


def test_a_name_of_another_cell_is_said_to_be_out_of_the_oublier_cell():
    """Learner's walk, stop 58: a helper defined in another cell gave « oublier a levé
    NameError » and hints about calls that do not end; the rule that only the oublier cell
    is read was never linked to it."""
    source = "async def oublier(service, user_id):\n    await supprimer_etat(service, user_id)\n"
    verdicts = evaluate_source(source).verdicts
    said = verdicts["sessions"].message
    assert "oublier a levé NameError\u00a0: name 'supprimer_etat' is not defined." in said, said
    assert said.endswith(OTHER_CELL), said


def test_sqlite_s_answer_is_said_in_french_by_verifier():
    """Learner's walk, stop 58: the TP quoted SQLite in English (« near "FORM": syntax
    error », « cannot VACUUM from within a transaction ») where the lessons said it in French."""
    source = (
        "async def oublier(service, user_id):\n"
        "    import sqlite3\n"
        "    c = sqlite3.connect(service.db_path)\n"
        "    c.execute('DELETE FORM sessions')\n"
    )
    said = evaluate_source(source).verdicts["sessions"].message
    assert "OperationalError\u00a0: erreur de syntaxe SQL près de «\u00a0FORM\u00a0»." in said


async def oublier_partage(sql, user_id):  # the second TP's stub, as its notebook gives it
    """Efface un élève de la base partagée : ses sessions, ses événements, son état user:."""
    # VOTRE CODE ICI
    raise NotImplementedError()


def test_verifier_partage_says_once_that_the_stub_is_not_written(capsys):
    """As the first TP's verifier: the one reason, once, not under each criterion (no server
    is started for a function that is not written)."""
    assert verifier_partage(oublier_partage) is None
    out = capsys.readouterr().out
    assert out.count("pas encore écrite") == 1
    assert out.startswith(f"✘ {NOT_WRITTEN}\n\n0/{len(PARTAGE_TESTS)} critères respectés ")
    assert not any(test.title in out for test in PARTAGE_TESTS)


def _children(process) -> list:
    """`process`'s descendants still there (one may end while they are listed)."""
    import psutil

    found = []
    for child in process.children(recursive=True):
        try:
            child.cmdline()
        except psutil.Error:
            continue
        found.append(child)
    return found


@pytest.mark.slow
def test_a_check_stopped_by_the_learner_says_so_in_french_and_stops_their_function(tmp_path):
    """Learner's walk, stop 57: the Stop button during ``verifier`` showed forty lines of
    KeyboardInterrupt through checks.py, evaluate.py and subprocess.py, and their function's
    process ran on for ten seconds. In a kernel of the learner's venv, interrupted as JupyterLab
    interrupts it: one French line, still an interruption (a « run all » stops), and no process
    of the check left."""
    import psutil

    with learner_kernel(tmp_path) as (km, kc):
        code = "async def oublier(service, user_id):\n    while True:\n        pass\n"
        msg_id = kc.execute(f"from course.labo import verifier\n{code}\nverifier(oublier)")
        kernel = psutil.Process(km.provisioner.process.pid)
        started = time.monotonic()
        while not any("submission_runner" in " ".join(p.cmdline()) for p in _children(kernel)):
            assert time.monotonic() - started < 60, "the check never started its function"
            time.sleep(0.1)
        time.sleep(1)  # their function is looping
        runners = _children(kernel)
        km.interrupt_kernel()
        reply, _printed, shown = cell_answer(kc, msg_id, 30)
        assert reply["status"] == "error"
        assert reply["ename"] == "VerificationInterrompue"
        assert shown == [
            "✘ Vérification interrompue (bouton Stop ou Ctrl-C)\u00a0: votre fonction a été "
            "arrêtée, rien n'est gardé de cet essai. Relancez la cellule quand vous voulez."
        ], shown
        _gone, alive = psutil.wait_procs(runners, timeout=2)  # killed: gone at once, not 10 s on
        assert not alive, [p.cmdline() for p in alive]


@pytest.mark.slow
def test_a_check_refuses_the_older_function_when_its_cell_no_longer_compiles(tmp_path):
    """Learner's walk, stop 57: a correct ``oublier`` run, then its cell edited into a syntax
    error and run again: ``verifier`` said 7/7 of the older function still in memory, and
    grading, which reads the cell, gives 0. Now refused in one French line; once the cell is
    corrected and run, checked again (the control)."""
    answer = (REPO / "grader" / "submissions" / "complete_vacuum.py").read_text(encoding="utf-8")
    broken = answer.replace("await ", "await (", 1)
    with learner_kernel(tmp_path) as (_km, kc):
        reply, printed, _ = run_cell(kc, f"from course.labo import verifier\n{answer}")
        assert reply["status"] == "ok", printed
        reply, _, _ = run_cell(kc, broken)
        assert reply["status"] == "error" and reply["ename"] == "SyntaxError"
        reply, printed, shown = run_cell(kc, "verifier(oublier)")
        assert reply["status"] == "error" and reply["ename"] == "CelluleModifiee", printed
        assert len(shown) == 1 and "ne se compile pas (ligne " in shown[0], shown
        assert "critères respectés" not in printed, printed
        reply, _, _ = run_cell(kc, answer)
        reply, printed, _ = run_cell(kc, "verifier(oublier)")
        assert reply["status"] == "ok" and f"{N}/{N} critères respectés" in printed, printed
        # second attack, stop 57: the same cell run broken, then corrected with the check in it
        # (the common way), or corrected under %%time, was refused; a broken cell under
        # %%time, or indented, or followed by a cell holding the definition in a string, passed
        check = "\nverifier(oublier)"
        for before, after, refused in (
            (broken + check, answer + check, False),
            (broken, "%%time\n" + answer, False),
            ("%%time\n" + broken, "", True),
            ("if True:\n" + "".join(f"    {line}\n" for line in broken.splitlines()), "", True),
            (broken, f"texte = {answer!r}", True),
        ):
            run_cell(kc, answer)
            run_cell(kc, before)
            if after:
                run_cell(kc, after)
            reply, printed, shown = run_cell(kc, "verifier(oublier)")
            assert (reply.get("ename") == "CelluleModifiee") is refused, (before, after, printed)
