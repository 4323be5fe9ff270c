"""Class grading that says what it did: graded, skipped and failed counted from nbgrader's own
log, a changed submission named (or regraded with --force), any failure named with a non-zero
exit; the same with two workers, assignments of several notebooks, and reruns; nothing graded
before the class is registered (a gradebook, its students) nor from a submission holding a
link."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import sys
from pathlib import Path

import nbformat
import pytest
from grading.autograde import main as autograde_main
from grading.runs.known_failures import FILE_NAME as FAILURES_FILE
from grading_course import copy_course, grading, nbgrader, register, submit
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook
from nbgrader.api import Gradebook
from tool_in_process import in_process

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]


def _scores(grader: Path, students: list[str], assignment: str = "oublier") -> dict[str, float]:
    with Gradebook(f"sqlite:///{grader / 'gradebook.db'}") as gb:
        return {s: gb.find_submission(assignment, s).score for s in students}


def test_a_changed_submission_is_named_then_regraded_with_force(course, expected_scores):
    """With two workers; with one (the default), the same class is graded, named and regraded
    by `make grade` and `make grade FORCE=1` in test_cycle_fresh_clone (steps 5 and 6)."""
    jobs = "2"
    register(course, "ana", "ben")
    # Attack (stop 53): a cell ana added for herself, which the graded copy drops (rebuilt from
    # the release), made her « modifié depuis sa notation » at every run, FORCE=1 or not
    mine = submit(course, "ana", "complete_vacuum") / "oublier.ipynb"
    nb = nbformat.read(mine, as_version=4)
    nb.cells.append(new_code_cell("print('essai en plus')"))
    # and her written answer in a cell of her own, the release's one deleted (graded all the same)
    nb.cells = [c for c in nb.cells if c.get("id") != "documentation"]
    nb.cells.append(new_markdown_cell("Ma procédure : tout effacer, puis VACUUM."))
    nbformat.write(nb, mine)
    submit(course, "ben", "ebauche")
    first = grading(course, "autograde", "oublier", "--jobs", jobs)
    assert first.returncode == 0, first.stdout + first.stderr
    assert "2 rendu(s) noté(s), 0 déjà noté(s)" in first.stdout and "0 en échec" in first.stdout
    stub = expected_scores["ebauche"]["score"]
    assert _scores(course, ["ana", "ben"]) == {"ana": 10, "ben": stub}

    submit(course, "ben", "complete_vacuum")  # ben sends a corrected notebook (no timestamp.txt)
    again = in_process(autograde_main, course, "oublier", "--jobs", jobs)
    assert again.returncode == 1, again.stdout
    assert "0 rendu(s) noté(s), 2 déjà noté(s)" in again.stdout
    assert "ben\u00a0: rendu modifié depuis sa notation" in again.stdout
    assert "make grade FORCE=1" in again.stdout and "ana" not in again.stdout.split("⚠")[1]
    assert _scores(course, ["ben"]) == {"ben": stub}

    forced = in_process(autograde_main, course, "oublier", "--jobs", jobs, "--force")
    assert forced.returncode == 0, forced.stdout + forced.stderr
    assert "2 rendu(s) noté(s), 0 déjà noté(s)" in forced.stdout
    assert _scores(course, ["ana", "ben"]) == {"ana": 10, "ben": 10}
    with sqlite3.connect(course / "gradebook.db") as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    # her written answer taken out since (no new timestamp.txt): grading would now read the
    # release's empty answer, so she is named (attack, stop 53: the check read the graded copy)
    nb = nbformat.read(mine, as_version=4)
    nb.cells = [c for c in nb.cells if "Ma procédure" not in c.source]
    nbformat.write(nb, mine)
    later = in_process(autograde_main, course, "oublier", "--jobs", jobs)
    assert later.returncode == 1, later.stdout
    assert "ana\u00a0: rendu modifié depuis sa notation" in later.stdout, later.stdout


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_failure_mid_class_is_named_and_fails_the_command(course, jobs, tmp_path, monkeypatch):
    # a temporary folder of its own: other tests run beside this one (pytest-xdist)
    private_tmp = tmp_path / "tmp"
    private_tmp.mkdir()
    monkeypatch.setenv("TMPDIR", str(private_tmp))
    register(course, "ana", "ben", "cyr")
    submit(course, "ana", "complete_vacuum")
    broken = course / "submitted" / "ben" / "oublier"
    broken.mkdir(parents=True)
    (broken / "oublier.ipynb").write_text('{"pas": "un notebook"')
    submit(course, "cyr", "complete_vacuum")
    proc = grading(course, "autograde", "oublier", "--jobs", jobs)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "2 rendu(s) noté(s), 0 déjà noté(s) (laissé(s) tel(s) quel(s)), 1 en échec" in (
        proc.stdout
    )
    assert "✘ 1 rendu(s) en échec" in proc.stdout
    assert "  - ben\u00a0: notebook illisible (abîmé" in proc.stdout
    assert _scores(course, ["ana", "cyr"]) == {"ana": 10, "cyr": 10}
    assert "has changed! (should be" not in proc.stdout + proc.stderr  # kept in the log only
    assert "avertissements « Attribute 'checksum' … has changed »" in proc.stdout  # counted
    log = (course / "rapport" / "autograde.log").read_text()
    assert "has changed! (should be" in log and "There was an error processing assignment" in log
    assert not list(private_tmp.glob("autograde-parallele-*"))  # the workers' copies removed


def _two_notebook_assignment(grader: Path) -> None:
    """solutions/deux: two notebooks, one graded cell each (a value the student computes)."""
    for name, answer in (("partie1", "x = 2"), ("partie2", "y = 3")):
        var, value = answer.split(" = ")
        cells = [
            new_code_cell(
                f"### BEGIN SOLUTION\n{answer}\n### END SOLUTION",
                metadata={
                    "nbgrader": {
                        "grade_id": f"reponse_{name}",
                        "solution": True,
                        "grade": False,
                        "locked": False,
                        "schema_version": 3,
                    }
                },
            ),
            new_code_cell(
                f"assert {var} == {value}",
                metadata={
                    "nbgrader": {
                        "grade_id": f"test_{name}",
                        "solution": False,
                        "grade": True,
                        "points": 1,
                        "locked": True,
                        "schema_version": 3,
                    }
                },
            ),
        ]
        nb = new_notebook(
            cells=cells,
            metadata={
                "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}
            },
        )
        folder = grader.parent / "solutions" / "deux"
        folder.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, folder / f"{name}.ipynb")


def test_two_workers_grade_several_notebooks_and_reruns(course):
    grader = course  # its gradebook exists (the TP's): "deux" is added to it, as a second TP is
    _two_notebook_assignment(grader)
    assert nbgrader(grader, "generate_assignment", "deux").returncode == 0
    register(grader, "ana", "ben", "cyr")
    release = grader.parent / "notebooks" / "deux"
    for student, wrong in (("ana", None), ("ben", "partie2"), ("cyr", "partie1")):
        folder = grader / "submitted" / student / "deux"
        shutil.copytree(release, folder)
        for name in ("partie1", "partie2"):
            nb = nbformat.read(folder / f"{name}.ipynb", as_version=4)
            answer = {"partie1": "x = 2", "partie2": "y = 3"}[name]
            nb.cells[0].source = "x = 0" if name == wrong else answer
            nbformat.write(nb, folder / f"{name}.ipynb")
    proc = grading(grader, "autograde", "deux", "--jobs", "2")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "3 rendu(s) noté(s)" in proc.stdout
    expected = {"ana": 2, "ben": 1, "cyr": 1}
    assert _scores(grader, list(expected), "deux") == expected
    with Gradebook(f"sqlite:///{grader / 'gradebook.db'}") as gb:
        ben = gb.find_submission("deux", "ben")
        assert {nb.name: nb.score for nb in ben.notebooks} == {"partie1": 1, "partie2": 0}
    rerun = in_process(autograde_main, grader, "deux", "--jobs", "2", "--force")
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    assert "3 rendu(s) noté(s), 0 déjà noté(s)" in rerun.stdout
    assert _scores(grader, list(expected), "deux") == expected


def test_a_kernel_that_dies_at_its_start_is_graded_again_not_failed(course, tmp_path, monkeypatch):
    """A kernel that ends before its first reply (jupyter_client's TCP ports taken meanwhile by
    another process: seen with --jobs 2, « Address already in use ») ran none of the student's
    code: the submission is graded again, not failed, and not recorded as a known failure. Here
    the first kernel of the class dies at its start (a kernelspec of the notebooks' name that
    ends once); control: in stock nbgrader that submission fails."""
    grader = course
    _two_notebook_assignment(grader)
    assert nbgrader(grader, "generate_assignment", "deux").returncode == 0
    register(grader, "ana", "ben")
    release = grader.parent / "notebooks" / "deux"
    for student in ("ana", "ben"):
        shutil.copytree(release, grader / "submitted" / student / "deux")
    kernels = tmp_path / "jupyter" / "kernels" / "python3"
    kernels.mkdir(parents=True)
    once = tmp_path / "mort-une-fois"
    start = f'if mkdir "{once}" 2>/dev/null; then exit 1; fi; exec "{sys.executable}" '
    start += '-m ipykernel_launcher -f "$0"'
    (kernels / "kernel.json").write_text(
        json.dumps(
            {
                "argv": ["/bin/sh", "-c", start, "{connection_file}"],
                "display_name": "Python 3",
                "language": "python",
            }
        )
    )
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))
    stock = nbgrader(grader, "autograde", "deux", "--student=ana")
    assert stock.returncode != 0 and "Kernel died before replying" in stock.stdout + stock.stderr
    shutil.rmtree(grader / "autograded", ignore_errors=True)
    once.rmdir()  # the next kernel dies again, once
    proc = grading(grader, "autograde", "deux", "--force")
    said = proc.stdout + proc.stderr
    assert proc.returncode == 0, said
    assert "2 rendu(s) noté(s)" in said and "noté à nouveau" in said, said
    assert once.is_dir()  # the kernel did die once
    assert _scores(grader, ["ana", "ben"], "deux") == {"ana": 0, "ben": 0}
    for known in grader.parent.rglob(FAILURES_FILE):  # never skipped as a known failure
        assert "ana" not in known.read_text(encoding="utf-8")


def test_fresh_gradebook_gets_the_assignment_and_nbgrader_args_pass_through(course):
    """Nothing is graded before the class is registered (dpo attack, item 9): with a gradebook
    that registers nobody, nor with none at all (never created: nbgrader would make one and
    grade every folder, « Ben/ » too); once `make students` made it, the assignment is added."""
    grader = course
    submit(grader, "ana", "complete_vacuum")
    submit(grader, "ben", "complete_vacuum")
    submit(grader, "Ben", "complete_vacuum")  # ben's copy in the wrong case: nobody registered it
    nobody = grading(grader, "autograde", "oublier")
    assert nobody.returncode == 2, nobody.stdout + nobody.stderr
    assert "✘ Rien n'a été noté\u00a0: aucun élève n'est inscrit au carnet de notes (" in (
        nobody.stderr
    )
    assert "make students ELEVES=grader/eleves.csv" in nobody.stderr
    # a fresh clone after `make notebooks`: the student version generated, no gradebook
    for db in grader.glob("gradebook.db*"):
        db.unlink()
    assert not (grader / "gradebook.db").exists() and (grader.parent / "notebooks").is_dir()
    missing = grading(grader, "autograde", "oublier")
    assert missing.returncode == 2, missing.stdout + missing.stderr
    assert "✘ Rien n'a été noté\u00a0: le carnet de notes est introuvable (" in missing.stderr
    assert "make students ELEVES=grader/eleves.csv" in missing.stderr
    assert not (grader / "gradebook.db").exists() and not (grader / "autograded").exists()
    register(grader, "ana", "ben")  # what `make students` runs: the gradebook, no assignment
    release = grader.parent / "notebooks"
    before = {p: p.read_bytes() for p in release.rglob("*") if p.is_file()}
    proc = grading(grader, "autograde", "oublier", "--student=ana")  # nbgrader args pass through
    assert proc.returncode == 1, proc.stdout + proc.stderr  # Ben/ is named
    assert "  - Ben/\u00a0: pas un élève inscrit\u00a0; le plus proche inscrit est «\u00a0ben" in (
        proc.stdout
    )
    assert not (grader / "autograded" / "Ben").exists()
    assert "« oublier » manquait au carnet de notes\u00a0: ajouté depuis" in proc.stdout
    assert "1 rendu(s) noté(s), 0 déjà noté(s)" in proc.stdout  # ben not selected, not counted
    assert _scores(grader, ["ana"]) == {"ana": 10}
    assert not (grader / "autograded" / "ben").exists()
    assert {p: p.read_bytes() for p in release.rglob("*") if p.is_file()} == before


def test_without_sources_one_sentence_names_the_command(tmp_path):
    grader = copy_course(tmp_path / "cours")  # a copy with the student version, no sources
    shutil.copytree(grader.parent / "solutions", grader.parent / "notebooks")
    shutil.rmtree(grader.parent / "solutions")
    register(grader, "ana")
    submit(grader, "ana", "complete_vacuum")
    proc = grading(grader, "autograde", "oublier")
    assert proc.returncode == 2
    assert "n'est pas dans le carnet de notes" in proc.stderr
    assert f"cd {grader} && nbgrader generate_assignment oublier" in proc.stderr
    assert not (grader / "autograded").exists()


@pytest.mark.parametrize("flag", [[], ["--sans-bac-a-sable"]])
def test_no_sandbox_no_grading_unless_asked(tmp_path, monkeypatch, capsys, flag):
    """The refusal path, with the sandbox probe answering "unavailable" (the probe itself is the
    lab's, tested with it)."""
    grader = copy_course(tmp_path / "cours")
    monkeypatch.chdir(grader)
    monkeypatch.setattr(
        "grading.autograde.sandbox_problem",
        lambda: "Le bac à sable manque\u00a0: installez bubblewrap (apt install bubblewrap).",
    )
    status = autograde_main(["oublier", *flag])
    err = capsys.readouterr().err
    assert status == 2
    if flag:  # past the sandbox check: stopped only because there is no class to grade
        assert "le carnet de notes est introuvable" in err and "bubblewrap" not in err
    else:
        assert "installez bubblewrap" in err and "SANS_BAC_A_SABLE=1" in err
        assert not (grader / "rapport").exists()


def test_a_notebook_costly_or_impossible_for_nbgrader_is_refused_before_it_reads_it(course):
    """Attack, stop 56: nbformat reports each invalid output of a notebook it reads at about
    44 kB and 0.25 ms, as the instructor, outside the sandbox: ben's 470 kB notebook of 150,000
    empty outputs made make grade take 71 s and 7 GB (1.5 MB would kill a 23 GB machine). cyr's
    answer holds a lone half of a surrogate pair (« \\ud800 » in the file, which a browser
    saves): nbgrader could not write it back and failed him on every run. Both are refused
    before nbgrader reads them, named with what to ask the student; ana, the control, is
    graded."""
    register(course, "ana", "ben", "cyr", "dou", "eve", "fay", "gus", "hal", "ida")
    submit(course, "ana", "complete_vacuum")
    edits = {"ben": "sorties", "cyr": "caractère", "dou": "format 3", "eve": "pièces jointes"}
    # third attack, stop 57: in an invalid notebook, nbformat's second reading (jsonschema)
    # compares tags pair by pair (5,000: 97 s) and keeps an error per value (60,000 values in
    # one output: 48 s, 2.9 GB), under the 2,000 cells, outputs and attachments; its cost is
    # measured (grading.runs.read_cost). Controls, graded: an older JupyterLab's nbformat 4.4
    # keeping cell ids, with a 250-line print, and a VS Code markdown cell with outputs: both
    # invalid, read in 0.01 s (a count of values refused them)
    edits |= {"fay": "étiquettes", "gus": "valeurs", "hal": "4.4", "ida": "vscode"}
    for student, edit in edits.items():
        notebook = submit(course, student, "complete_vacuum") / "oublier.ipynb"
        nb = json.loads(notebook.read_text(encoding="utf-8"))
        code = next(c for c in nb["cells"] if c["cell_type"] == "code")
        text = next(c for c in nb["cells"] if c["cell_type"] == "markdown")
        if edit == "sorties":
            code["outputs"] = [{}] * 20_000  # (150,000 in the attack)
        elif edit == "caractère":
            code["source"] = "".join(code["source"]) + "# \ud800\n"
        elif edit == "format 3":  # second attack: invalid outputs in an old format's worksheets
            nb = {"nbformat": 3, "nbformat_minor": 0, "metadata": {}, "worksheets": []}
        elif edit == "étiquettes":
            code["metadata"]["tags"] = [{"k": k} for k in range(3000)]  # 78 s to read
        elif edit == "valeurs":
            bundle = {f"text/x{k}": k for k in range(20_000)}  # 10,000: 13.5 s
            code["outputs"] = [{"output_type": "display_data", "metadata": {}, "data": bundle}]
        elif edit == "4.4":
            nb["nbformat_minor"] = 4
            lines = [f"ligne {k}\n" for k in range(250)]
            code["outputs"] = [{"output_type": "stream", "name": "stdout", "text": lines}]
        elif edit == "vscode":
            text["outputs"], text["execution_count"] = [], None
        else:  # second attack: 40,000 invalid attachments took 0.9 GB
            text["attachments"] = {f"i{k}.png": {} for k in range(3000)}
        notebook.write_text(json.dumps(nb), encoding="utf-8")
    proc = grading(course, "autograde", "oublier")
    said = proc.stdout + proc.stderr
    assert proc.returncode == 1, said
    assert "3 rendu(s) noté(s), 0 déjà noté(s) (laissé(s) tel(s) quel(s)), 6 en échec" in said
    for student in ("fay", "gus"):
        assert f"{student}\u00a0: oublier.ipynb\u00a0: notebook qui ne respecte pas le format" in (
            said
        ), said
        assert "que nbformat met plus de 5\u00a0s à lire" in said, said
    assert "ben\u00a0: oublier.ipynb\u00a0: 20" in said and "sorties et pièces jointes" in said
    assert "cyr\u00a0: oublier.ipynb\u00a0: un caractère qui n'existe pas seul" in said, said
    assert "dou\u00a0: oublier.ipynb\u00a0: notebook d'un ancien format" in said, said
    assert "eve\u00a0: oublier.ipynb\u00a0: 30" in said, said
    assert _scores(course, ["ana", "hal", "ida"]) == {"ana": 10, "hal": 10, "ida": 10}
    assert sorted(p.name for p in (course / "autograded").iterdir()) == ["ana", "hal", "ida"]


def test_a_submission_holding_a_link_is_refused_never_followed(course, tmp_path):
    """A teacher unzips a student's archive: a link to the gradebook (or /etc/shadow), a fifo, or
    the student's folder itself a link. Never followed, never copied (nbgrader would copy the
    target into autograded/ and feedback/, then the learner's export would ship it), counted as
    failed and named with the path, the folder left as it was; the control, ana, is graded."""
    register(course, "ana", "ben", "cyr", "dou")
    submit(course, "ana", "complete_vacuum")
    linked = submit(course, "ben", "complete_vacuum")
    (linked / "classe.txt").symlink_to("../../../gradebook.db")
    piped = submit(course, "cyr", "complete_vacuum")
    os.mkfifo(piped / "tube")
    elsewhere = tmp_path / "ailleurs"  # outside the course
    shutil.move(submit(course, "dou", "complete_vacuum").parent, elsewhere)
    (course / "submitted" / "dou").symlink_to(elsewhere)
    before = {p: os.readlink(p) for p in (linked / "classe.txt", course / "submitted" / "dou")}

    proc = grading(course, "autograde", "oublier")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "1 rendu(s) noté(s), 0 déjà noté(s) (laissé(s) tel(s) quel(s)), 3 en échec" in (
        proc.stdout
    )
    not_plain = "1 entrée(s) qui ne sont pas de simples fichiers, jamais lues ni copiées"
    assert f"  - ben\u00a0: {not_plain}" in proc.stdout
    assert (
        "ben/oublier/classe.txt (lien symbolique vers «\u00a0../../../gradebook.db\u00a0», non "
        "suivi)" in proc.stdout
    )
    assert "cyr/oublier/tube (tube nommé, fifo)" in proc.stdout
    assert f"dou (lien symbolique vers «\u00a0{elsewhere}\u00a0», non suivi)" in proc.stdout
    assert _scores(course, ["ana"]) == {"ana": 10}  # the control: graded
    assert sorted(p.name for p in (course / "autograded").iterdir()) == ["ana"]
    gradebook = (course / "gradebook.db").read_bytes()[:4096]
    copies = [p for p in (course / "autograded").rglob("*") if p.is_file()]
    assert copies and not [p for p in copies if p.read_bytes().startswith(gradebook[:100])]
    # the folders untouched: the links and the fifo are still there
    assert {p: os.readlink(p) for p in before} == before
    assert (piped / "tube").is_fifo() and (elsewhere / "oublier" / "oublier.ipynb").is_file()

    # asked for by name: refused, exit 2, the reason given
    alone = grading(course, "autograde", "oublier", "--student=ben")
    assert alone.returncode == 2, alone.stdout + alone.stderr
    assert "✘ 3 rendu(s) refusé(s)\u00a0:" in alone.stderr
    assert "ben/oublier/classe.txt (lien symbolique" in alone.stderr
    assert not (course / "autograded" / "ben").exists()

    # two --student: nbgrader would grade the last one only; refused before anything runs
    two = grading(course, "autograde", "oublier", "--student=ana", "--student=cyr")
    assert two.returncode == 2, two.stdout + two.stderr
    said = "--student donné plusieurs fois («\u00a0ana\u00a0», puis «\u00a0cyr\u00a0»)"
    assert said in two.stderr
    assert sorted(p.name for p in (course / "autograded").iterdir()) == ["ana"]


def test_submissions_copied_by_hand_readable_by_all_are_made_private(course):
    """The README's class without a hub: the teacher copies a notebook received by e-mail into
    grader/submitted/<id>/oublier/ from a shell at umask 022, so every account of the machine
    read the learner's work; `make grade` takes the others' rights away from submitted/ (the
    group's stay) and says so, once."""
    register(course, "ana")
    folder = submit(course, "ana", "complete")
    for path in (course / "submitted", folder.parent, folder):
        path.chmod(0o755)
    (folder / "oublier.ipynb").chmod(0o644)
    proc = grading(course, "autograde")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (course / "submitted").stat().st_mode & 0o777 == 0o750
    said = "submitted était lisible par tous les comptes de la machine (travail des élèves)\u00a0:"
    assert said in proc.stdout
    proc = grading(course, "autograde")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "lisible par tous" not in proc.stdout
