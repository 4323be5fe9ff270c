"""What one class run left: the submissions nbgrader would leave out of date (it skips a graded
student unless ``timestamp.txt`` is newer), and the French summary."""

from __future__ import annotations

import filecmp
import json
from collections.abc import Sequence
from contextlib import suppress
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import nbformat
from nbgrader.api import Gradebook, MissingEntry
from nbgrader.utils import determine_grade

from ..classroom.gradebook import gradebook_rows
from ..classroom.paths import CourseDirs
from ..french.french_format import seconds_text
from ..nbgrader_ext.outcome_record import METADATA_KEY
from ..nbgrader_ext.release import nbgrader_meta, read_template, rebuild
from .nbgrader_log import Outcomes
from .submitted_ids import IdReport

__all__ = [
    "CHECKSUM_NOTE",
    "DISAGREE",
    "Summary",
    "changed_submissions",
    "disagreeing_grades",
    "interrupted_gradings",
    "missing_from_gradebook",
]

CHECKSUM_NOTE = (
    "avertissements « Attribute 'checksum' … has changed » de nbgrader dans le journal\u00a0: sans "
    "gravité (issue 1961 de nbgrader), voir « Ce que disent les avertissements » dans "
    "grader/README.md"
)


@dataclass
class Summary:
    """What one class run did, from nbgrader's log and gradebook."""

    students: list[str]
    outcomes: Outcomes
    stale: dict[str, str]  # skipped by nbgrader although their grade is out of date -> why
    seconds: float
    jobs: int
    status: int  # nbgrader's worst exit status
    log_path: Path
    note: str | None  # the gradebook had to be completed first
    ids: IdReport  # folders of submitted/ not matched to the class
    private: bool = True  # submitted/ is closed to the other accounts (classroom.private)

    @property
    def ok(self) -> bool:
        out = self.outcomes
        failed = out.failed or self.stale or self.status != 0 or self.ids.problems
        return not failed and self.private

    def lines(self, assignment: str) -> list[str]:
        out = self.outcomes
        graded = len(out.done)
        per = f", {seconds_text(self.seconds / graded, 2)} par rendu noté" if graded else ""
        lines = [self.note] if self.note else []
        lines.append(
            f"{assignment}\u00a0: {graded} rendu(s) noté(s), {len(out.skipped)} déjà noté(s) "
            f"(laissé(s) tel(s) quel(s)), {len(out.failed)} en échec — {seconds_text(self.seconds)}"
            f"{per}, {self.jobs} processus."
        )
        if self.stale:
            lines.append(
                f"⚠ {len(self.stale)} rendu(s) sauté(s) par nbgrader alors que leur note n'est pas "
                "à jour\u00a0:"
            )
            lines += [f"  - {s}\u00a0: {why}" for s, why in self.stale.items()]
            lines.append(
                "  Pour les renoter\u00a0: make grade FORCE=1 (nbgrader autograde --force, qui "
                "renote tous les rendus)."
            )
        if out.failed:
            lines.append(f"✘ {len(out.failed)} rendu(s) en échec\u00a0:")
            lines += [f"  - {s}\u00a0: {why or 'voir le journal'}" for s, why in out.failed.items()]
        if self.status != 0 and not out.failed:
            lines.append(f"✘ nbgrader s'est arrêté en erreur (code {self.status}).")
        if out.checksum_warnings:
            lines.append(f"({out.checksum_warnings} {CHECKSUM_NOTE}.)")
        lines += self.ids.lines()
        lines.append(f"Journal complet de nbgrader\u00a0: {self.log_path}")
        return lines


def _written_by_student(cell: dict) -> bool:
    """Cells nbgrader does not put back from the gradebook: what the student wrote."""
    meta = cell.get("metadata", {}).get("nbgrader", {})
    return not meta.get("locked") and not (meta.get("grade") and not meta.get("solution"))


def _notebook_changed(
    submitted_nb: Path, graded_nb: Path, assignment: str, template: nbformat.NotebookNode | None
) -> bool:
    if not graded_nb.is_file():
        return True
    try:
        sub, graded = (nbformat.read(path, as_version=4) for path in (submitted_nb, graded_nb))
    except Exception:  # an unreadable file: nbgrader will say why when it grades it
        return False
    if METADATA_KEY in graded.metadata and template is not None:
        # a lab's copy, graded as rebuilt from the release (nbgrader_ext.hooks): what grading
        # would read of the submission now is its answers put into the release (a cell the
        # student added is dropped, and changes nothing), compared with the graded copy's
        # answers; each lab's answer function is named like it (hooks.LABS)
        again = rebuild(sub, template, assignment).nb
        return _answers(again) != _answers(graded)
    return len(sub.cells) != len(graded.cells) or any(
        a.cell_type != b.cell_type or (_written_by_student(a) and a.source != b.source)
        for a, b in zip(sub.cells, graded.cells, strict=True)
    )


def _answers(nb: nbformat.NotebookNode) -> list[str]:
    """The texts of the cells a student writes (nbgrader's solution cells), in order."""
    return [c.source for c in nb.cells if nbgrader_meta(c).get("solution")]


def _timestamp(folder: Path) -> str:
    path = folder / "timestamp.txt"
    return path.read_text(encoding="utf-8").strip() if path.is_file() else ""


def changed_submissions(dirs: CourseDirs, assignment: str, students: Sequence[str]) -> list[str]:
    """Graded students whose submission differs from what was graded (a notebook's cells or
    ``timestamp.txt``): nbgrader only regrades a newer ``timestamp.txt`` without ``--force``."""
    changed = []

    @cache
    def release(name: str) -> nbformat.NotebookNode | None:  # read once for the class
        paths = [folder / assignment / name for folder in (dirs.release, dirs.source)]
        found = next((path for path in paths if path.is_file()), None)  # as hooks finds it
        return None if found is None else read_template(found)

    for student in students:
        sub = dirs.submitted / student / assignment
        graded = dirs.autograded / student / assignment
        if not graded.is_dir():
            continue
        if _timestamp(sub) != _timestamp(graded) or any(
            _notebook_changed(nb, graded / nb.name, assignment, release(nb.name))
            for nb in sorted(sub.glob("*.ipynb"))
        ):
            changed.append(student)
    return changed


# the automatic tests (code grade cells that are no answer) left without a score: a run stopped
# (Ctrl-C, a reboot) after nbgrader wrote the graded copy and before it saved the grades
_UNSCORED = (
    "SELECT DISTINCT sa.student_id, a.name FROM grade g "
    "JOIN grade_cells gc ON gc.id = g.cell_id JOIN base_cell c ON c.id = gc.id "
    "JOIN submitted_notebook sn ON sn.id = g.notebook_id "
    "JOIN submitted_assignment sa ON sa.id = sn.assignment_id "
    "JOIN assignment a ON a.id = sa.assignment_id "
    "WHERE gc.cell_type = 'code' AND g.auto_score IS NULL AND NOT EXISTS (SELECT 1 FROM "
    "solution_cells s JOIN base_cell sc ON sc.id = s.id "
    "WHERE sc.name = c.name AND sc.notebook_id = c.notebook_id)"
)


# the automatic tests' scores in the gradebook: (student, notebook, cell) -> auto_score
_TEST_SCORES = (
    "SELECT sa.student_id, a.name, n.name, c.name, g.auto_score FROM grade g "
    "JOIN grade_cells gc ON gc.id = g.cell_id JOIN base_cell c ON c.id = gc.id "
    "JOIN submitted_notebook sn ON sn.id = g.notebook_id JOIN notebook n ON n.id = sn.notebook_id "
    "JOIN submitted_assignment sa ON sa.id = sn.assignment_id "
    "JOIN assignment a ON a.id = sa.assignment_id "
    "WHERE gc.cell_type = 'code' AND g.auto_score IS NOT NULL"
)
DISAGREE = (
    "le carnet de notes ne donne pas à ses tests automatiques les points que montre la copie "
    "notée (carnet de notes remplacé par une copie plus ancienne\u00a0?)"
)


def disagreeing_grades(dirs: CourseDirs, assignment: str, students: Sequence[str]) -> list[str]:
    """Students whose graded copy scores an automatic test otherwise than the gradebook (nbgrader
    scores a test cell from its output, ``determine_grade``): an older gradebook put back, which
    nbgrader would not notice, its feedback showing the old grade beside the new answer."""
    scores: dict[tuple[str, str, str], float] = {}
    for student, name, notebook, cell, score in gradebook_rows(dirs.db_url, _TEST_SCORES) or []:
        if name == assignment:
            scores[(student, notebook, cell)] = float(score)
    return [
        student
        for student in students
        if any(
            _disagrees(path, scores, student)
            for path in sorted((dirs.autograded / student / assignment).glob("*.ipynb"))
        )
    ]


def _disagrees(path: Path, scores: dict[tuple[str, str, str], float], student: str) -> bool:
    try:
        cells = nbformat.read(path, as_version=4).cells
    except Exception:  # noqa: BLE001 - not a notebook: nbgrader's own step says so
        return False
    for cell in cells:
        meta = nbgrader_meta(cell)
        key = (student, path.stem, str(meta.get("grade_id")))
        if key not in scores or cell.cell_type != "code" or meta.get("solution"):
            continue
        with suppress(Exception):  # a cell nbgrader could not score: not compared
            if abs(determine_grade(cell)[0] - scores[key]) > 1e-6:
                return True
    return False


def interrupted_gradings(dirs: CourseDirs, assignment: str, students: Sequence[str]) -> list[str]:
    """Students whose graded copy is there but not their automatic tests' scores, or is still the
    submission as nbgrader copied it before running it: a run stopped while grading them
    (Ctrl-C, the machine shut down), which nbgrader would skip as graded."""
    unscored = {s for s, a in gradebook_rows(dirs.db_url, _UNSCORED) or [] if a == assignment}

    def unrun(student: str) -> bool:
        """A copy of the submission, which no grading of a lab ends without its outcome record
        (a student who handed in her own graded copy is not regraded on every run)."""
        for graded in (dirs.autograded / student / assignment).glob("*.ipynb"):
            with suppress(OSError, ValueError, AttributeError):  # no such submission, no JSON
                if filecmp.cmp(graded, dirs.submitted / student / assignment / graded.name, False):
                    return METADATA_KEY not in json.loads(graded.read_bytes()).get("metadata", {})
        return False

    return [
        s
        for s in students
        if (dirs.autograded / s / assignment).is_dir() and (s in unscored or unrun(s))
    ]


def missing_from_gradebook(db_url: str, assignment: str, outcomes: Outcomes) -> dict[str, str]:
    """Every graded or skipped student must have a submission in the gradebook, its automatic
    tests scored: a graded one without fails; a skipped one without (a gradebook replaced or
    restored, a run interrupted while grading them) is out of date."""
    missing: dict[str, str] = {}
    unscored = {s for s, a in gradebook_rows(db_url, _UNSCORED) or [] if a == assignment}
    with Gradebook(db_url) as gb:
        for student in [*outcomes.done, *outcomes.skipped]:
            try:
                gb.find_submission(assignment, student)
            except MissingEntry:
                if student in outcomes.done:
                    outcomes.done.remove(student)
                    outcomes.failed[student] = "noté, mais absent du carnet de notes"
                else:
                    missing[student] = "copie notée présente, mais aucune note au carnet de notes"
                continue
            if student in unscored and student in outcomes.skipped:
                missing[student] = (
                    "notation interrompue (Ctrl-C, arrêt de la machine)\u00a0: tests "
                    "automatiques sans note"
                )
    return missing
