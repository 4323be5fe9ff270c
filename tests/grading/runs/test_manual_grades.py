"""Hand grading survives regrading (issue 22, point 4), with real nbgrader commands: written
answers graded by hand stay graded after ``make grade FORCE=1`` (``grading.autograde --force``)
when the answer did not change, go back to « to grade » when it did; the report says « réponse
écrite à noter » until the written answer is graded. Stock ``nbgrader autograde --force`` is the
control: it resets every hand grade to « needs manual grade »."""

from __future__ import annotations

import csv

import nbformat
import pytest
from grading.autograde import main as autograde_main
from grading.nbgrader_ext.criterion_titles import criterion_title
from grading.rapport import main as rapport_main
from grading_course import grading, nbgrader, register, submit
from helpers import tp_points
from nbgrader.api import Gradebook
from tool_in_process import in_process

# every automatic test of the TP passed: the criteria table's points (helpers.tp_points)
FULL = tp_points()[0]

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

WRITTEN = "documentation"  # the TP's written answer (markdown, 2 points, graded by hand)


def _write_answer(grader, student: str, text: str) -> None:
    path = grader / "submitted" / student / "oublier" / "oublier.ipynb"
    nb = nbformat.read(path, as_version=4)
    cells = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == WRITTEN]
    assert len(cells) == 1
    cells[0].source = text
    nbformat.write(nb, path)


def _written(grader, student: str):
    with Gradebook(f"sqlite:///{grader / 'gradebook.db'}") as gb:
        grade = gb.find_grade(WRITTEN, "oublier", "oublier", student)
        comment = gb.find_comment(WRITTEN, "oublier", "oublier", student)
        return grade.manual_score, grade.needs_manual_grade, comment.manual_comment


def _grade_by_hand(grader, student: str, score: float, comment: str) -> None:
    """What formgrader's API does when a grader types a score and a comment."""
    with Gradebook(f"sqlite:///{grader / 'gradebook.db'}") as gb:
        grade = gb.find_grade(WRITTEN, "oublier", "oublier", student)
        grade.manual_score = score
        grade.needs_manual_grade = grade.manual_score is None and grade.auto_score is None
        gb.find_comment(WRITTEN, "oublier", "oublier", student).manual_comment = comment
        gb.db.commit()


def _report(grader, command: bool = False) -> dict[str, dict[str, str]]:
    """The class report's rows (make rapport's, in grader/rapport/); `command`: by the teacher's
    command, else by its main() here."""
    proc = grading(grader, "rapport") if command else in_process(rapport_main, grader)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    with open(grader / "rapport" / "notes.csv", newline="", encoding="utf-8") as fh:
        return {row["student_id"]: row for row in csv.DictReader(fh)}


def test_hand_grades_survive_a_forced_regrade(course):
    grader = course
    register(grader, "ana", "ben")
    for student in ("ana", "ben"):
        submit(grader, student, "complete_vacuum")
        _write_answer(grader, student, f"Réponse écrite de {student} : on efface aussi le -wal.")
    first = grading(grader, "autograde", "oublier")
    assert first.returncode == 0, first.stdout + first.stderr
    assert _written(grader, "ana") == (None, True, None)

    # before hand grading: the report says the written answer waits, not that it failed
    rows = _report(grader, command=True)
    title = criterion_title(WRITTEN)
    assert rows["ana"]["why"] == "réponse écrite à noter"
    assert float(rows["ana"]["score"]) == FULL
    page = (grader / "rapport" / "rapport.html").read_text(encoding="utf-8")
    ana_row = page[page.index("<td>ana</td>") :].split("</tr>")[0]
    assert "réponse écrite à noter" in ana_row
    assert f'title="{title}"' not in ana_row  # not listed among the missed criteria

    _grade_by_hand(grader, "ana", 2.0, "Très clair.")
    _grade_by_hand(grader, "ben", 1.0, "Incomplet : et le -wal ?")
    rows = _report(grader)
    assert rows["ana"]["why"] == "" and float(rows["ana"]["score"]) == FULL + 2
    assert rows["ben"]["why"] == "" and float(rows["ben"]["score"]) == FULL + 1

    # ben rewrites his answer; the class is regraded with make grade FORCE=1
    _write_answer(grader, "ben", "Nouvelle réponse de ben : VACUUM et wal_checkpoint.")
    regrade = in_process(autograde_main, grader, "oublier", "--force")
    assert regrade.returncode == 0, regrade.stdout + regrade.stderr
    assert "1 note(s) à la main gardée(s) comme notée(s) (réponse inchangée)." in regrade.stdout
    assert f"à revoir dans formgrader (note et commentaire gardés)\u00a0: ben ({title})" in (
        regrade.stdout
    )
    assert _written(grader, "ana") == (2.0, False, "Très clair.")
    assert _written(grader, "ben") == (1.0, True, "Incomplet : et le -wal ?")
    rows = _report(grader)
    assert rows["ana"]["why"] == "" and float(rows["ana"]["score"]) == FULL + 2
    assert rows["ben"]["why"] == "réponse écrite à noter"

    # control: stock nbgrader alone puts ana's graded answer back to "needs manual grade"
    raw = nbgrader(grader, "autograde", "oublier", "--force", "--student=ana")
    assert raw.returncode == 0, raw.stdout + raw.stderr
    assert _written(grader, "ana") == (2.0, True, "Très clair.")
