"""The grading guide's table (grader/README.md, « Le cycle de notation »), followed in order on a
fresh clone of this repository with a local class: it grades, regrades, collects a zip, applies a
due date, writes feedback and a report, runs the demo beside the real class; nothing is lost,
nothing is skipped in silence. Prints its duration."""

from __future__ import annotations

import csv
import os
import subprocess
import sys
import time
import zipfile

import nbformat
import pytest
from grading.samples import build_submission
from grading_course import BIN, VENV, clone_head, make, submit, tree_digest
from helpers import tp_points
from nbgrader.api import Gradebook

# every automatic test of the TP passed: the criteria table's points (helpers.tp_points)
FULL = tp_points()[0]
LMS_DATED = "date du fichier dans l'export «\u00a0ent.zip\u00a0»"  # how zip-collect dated them

pytestmark = [pytest.mark.slow, pytest.mark.timeout(2400)]

# what a terminal has after `source .venv/bin/activate` (before it: the venv's bin/ not on PATH)
ACTIVATED = {"VIRTUAL_ENV": str(VENV), "PATH": f"{BIN}{os.pathsep}/usr/local/bin:/usr/bin:/bin"}


def _ok(proc: subprocess.CompletedProcess, *expected: str) -> str:
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    for text in expected:
        assert text in proc.stdout, (text, proc.stdout[-3000:])
    return proc.stdout


def _french_only(proc: subprocess.CompletedProcess, *expected: str) -> str:
    """A command that says what it did in French: nbgrader's English records and Python's
    warnings stay in its log."""
    out = _ok(proc, *expected)
    for english in ("| INFO]", "| WARNING]", "SAWarning", "Warning:"):
        assert english not in proc.stdout + proc.stderr, (english, proc.stdout + proc.stderr)
    return out


def _rows(path) -> dict[str, dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as fh:
        return {row["student_id"]: row for row in csv.DictReader(fh)}


def test_the_grading_table_in_order_on_a_fresh_clone(tmp_path, expected_scores):
    start = time.monotonic()
    clone = clone_head(tmp_path / "clone")
    grader = clone / "grader"
    readme = (clone / "grader" / "README.md").read_text(encoding="utf-8")
    for command in (
        "make notebooks",
        "make students ELEVES=grader/eleves.csv",
        "make duedate DATE=",
        "grader/submitted/<id>/oublier/oublier.ipynb",
        "make zip-collect",
        "make grade",
        "make grade FORCE=1",
        "make feedback",
        "make export",
        "make rapport",
        "make demo-grading",
    ):
        assert command in readme, command

    # 1. the student version: regenerated identical, no gradebook left behind
    _ok(make(clone, "notebooks"))
    status = subprocess.run(["git", "status", "--porcelain"], cwd=clone, capture_output=True)
    assert status.stdout == b""
    # 2. the class, from grader/ with a path relative to grader/ (where the teacher stands),
    # venv not activated; 3. the due date, from the root
    (grader / "eleves.csv").write_text(
        "id,first_name,last_name\nana,Ana,Martin\nben,Ben,Durand\ncyr,Cyr,Petit\ndou,Dou,Leroy\n"
    )
    _ok(make(clone, "students", "ELEVES=eleves.csv", folder="grader"))
    _french_only(
        make(clone, "duedate", "DATE=2025-03-14 18:00:00 Europe/Paris"),
        "14/03/2025 18:00 (Europe/Paris)",
    )
    # 4. submissions received one by one (ben a day and a half late)
    submit(grader, "ana", "complete_vacuum", "2025-03-14 17:30:00 Europe/Paris")
    submit(grader, "ben", "ebauche", "2025-03-16 06:00:00 Europe/Paris")
    # 5. grade, from grader/: the fresh gradebook gets the assignment from solutions/
    _ok(
        make(clone, "grade", folder="grader"),
        "« oublier » manquait au carnet de notes",
        "2 rendu(s) noté(s), 0 déjà noté(s)",
    )
    # ben sends a corrected notebook: named, not silently skipped; 6. FORCE=1 regrades
    submit(grader, "ben", "complete_vacuum", "2025-03-16 06:00:00 Europe/Paris")
    stale = make(clone, "grade")
    assert stale.returncode != 0
    assert "ben\u00a0: rendu modifié depuis sa notation" in stale.stdout
    assert "0 rendu(s) noté(s), 2 déjà noté(s)" in stale.stdout
    assert "make grade FORCE=1" in stale.stdout and "ana" not in stale.stdout.split("⚠")[1]
    _ok(make(clone, "grade", "FORCE=1"), "2 rendu(s) noté(s), 0 déjà noté(s)")
    # 4. a zip from the school's platform: cyr and eve (not registered); graded with two workers
    archive = grader / "downloaded" / "oublier" / "archive"
    archive.mkdir(parents=True)
    release = clone / "notebooks" / "oublier" / "oublier.ipynb"
    with zipfile.ZipFile(archive / "ent.zip", "w") as zf:
        for student, sample in (("cyr", "ebauche"), ("eve", "complete_vacuum")):
            text = (grader / "submissions" / f"{sample}.py").read_text(encoding="utf-8")
            # the LMS dates each file (14/03 17:00, Paris): that is the submission time
            member = zipfile.ZipInfo(f"{student}/oublier.ipynb", date_time=(2025, 3, 14, 17, 0, 0))
            zf.writestr(member, nbformat.writes(build_submission(release, text)))
    # eve is not on the class list: named, not collected as a ghost; once registered, the same
    # zip again collects her alone (cyr, already collected, is left as he is)
    refused = make(clone, "zip-collect")
    assert refused.returncode != 0, refused.stdout + refused.stderr
    assert "«\u00a0eve\u00a0» n'est pas un élève inscrit" in refused.stdout, refused.stdout
    with open(grader / "eleves.csv", "a", encoding="utf-8") as roster:
        roster.write("eve,Eve,Morel\n")
    _ok(make(clone, "students", "ELEVES=grader/eleves.csv"))
    _ok(make(clone, "zip-collect"), "Collectés\u00a0: eve")
    _french_only(make(clone, "grade", "JOBS=2"), "2 rendu(s) noté(s), 2 déjà noté(s)", "0 en échec")
    # 7. feedback; 9. export, from grader/ with the venv activated; 10. report, from the root
    # with the venv activated
    _ok(make(clone, "feedback"), "4 page(s) de retour écrite(s)")
    _french_only(
        make(clone, "export", folder="grader", extra_env=ACTIVATED),
        "Notes exportées\u00a0: 5 ligne(s), 5 élève(s)",
    )
    _french_only(
        make(clone, "rapport", extra_env=ACTIVATED),
        "Rapport de «\u00a0oublier\u00a0»\u00a0: 5 élève(s)",
    )
    # an unknown target from grader/ is make's own error, from the root Makefile
    unknown = make(clone, "pas-une-cible", folder="grader")
    assert unknown.returncode != 0 and "pas-une-cible" in unknown.stderr, unknown.stderr
    theirs = _rows(grader / "rapport" / "grades.csv")
    ours = _rows(grader / "rapport" / "notes.csv")
    assert sorted(ours) == sorted(theirs) == ["ana", "ben", "cyr", "dou", "eve"]
    for student in ours:
        assert float(ours[student]["score"]) == float(theirs[student]["score"]), student
    stub = expected_scores["ebauche"]["score"]
    expected = {"ana": FULL, "ben": FULL - 2, "cyr": float(stub), "dou": 0.0, "eve": FULL}
    assert {s: float(r["score"]) for s, r in ours.items()} == expected  # ben: 2 days started
    assert float(ours["ben"]["late_submission_penalty"]) == 2
    assert ours["dou"]["why"] == "pas de rendu"
    page = (grader / "rapport" / "rapport.html").read_text(encoding="utf-8")
    assert "Ben Durand" in page and "(−2\u00a0pt)" in page
    # one lateness rule for every submission: the zip's copies are dated by the LMS's file dates,
    # and say so, in the page and in the spreadsheet file alike
    sheet = (grader / "rapport" / "notes-tableur.csv").read_text(encoding="utf-8-sig")
    late = {
        row["identifiant"]: row["retard"]
        for row in csv.DictReader(sheet.splitlines(), delimiter=";")
    }
    assert late == {
        "ana": "à l'heure",
        "ben": "1 j 12 h (−2\u00a0pt)",
        "cyr": f"à l'heure — heure\u00a0: {LMS_DATED}",
        "dou": "—",
        "eve": f"à l'heure — heure\u00a0: {LMS_DATED}",
    }
    assert "heure de rendu inconnue" not in page
    assert page.count("\u00a0ent.zip\u00a0") == 2, page  # cyr's and eve's rows

    # the demo, beside the real class: nothing of the class changes
    real = {part: tree_digest(grader / part) for part in ("submitted", "autograded", "feedback")}
    gradebook = (grader / "gradebook.db").read_bytes()
    _ok(make(clone, "demo-grading", "EXEMPLES=complete_vacuum"), "1 rendu(s) noté(s)")
    assert {part: tree_digest(grader / part) for part in real} == real
    assert (grader / "gradebook.db").read_bytes() == gradebook
    assert (grader / "demo" / "rapport" / "rapport.html").is_file()
    # a class command aimed at the demo, a folder without grading/: a French refusal
    aimed = make(clone, "rapport", "NOTATION=grader/demo")
    assert aimed.returncode == 2, aimed.stdout + aimed.stderr
    assert "✘ NOTATION=grader/demo n'a pas de dossier grading/\u00a0:" in aimed.stderr
    assert "No module named" not in aimed.stderr
    with Gradebook(f"sqlite:///{grader / 'demo' / 'gradebook.db'}") as gb:
        assert [s.id for s in gb.students] == ["complete_vacuum"]
    # nothing lost: every submission is the last one received
    for student in ("ana", "ben", "cyr", "eve"):
        assert (grader / "submitted" / student / "oublier" / "oublier.ipynb").is_file()
    seconds = time.monotonic() - start
    print(f"\nCycle du guide sur un clone neuf\u00a0: {seconds:.0f} s", file=sys.stderr)
