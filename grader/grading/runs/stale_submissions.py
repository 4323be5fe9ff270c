"""Submissions nbgrader would leave out of date (it skips a graded student unless
``timestamp.txt`` is newer): a notebook changed since, or a gradebook that lost the grade."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import nbformat

from ..classroom.paths import CourseDirs
from .nbgrader_log import Outcomes

__all__ = ["changed_submissions", "missing_from_gradebook"]


def _written_by_student(cell: dict) -> bool:
    """Cells nbgrader does not put back from the gradebook: what the student wrote."""
    meta = cell.get("metadata", {}).get("nbgrader", {})
    if meta.get("locked"):
        return False
    return not (meta.get("grade") and not meta.get("solution"))


def _notebook_changed(submitted_nb: Path, graded_nb: Path) -> bool:
    if not graded_nb.is_file():
        return True
    try:
        sub = nbformat.read(submitted_nb, as_version=4)
        graded = nbformat.read(graded_nb, as_version=4)
    except Exception:  # an unreadable file: nbgrader will say why when it grades it
        return False
    if len(sub.cells) != len(graded.cells):
        return True
    return any(
        a.cell_type != b.cell_type or (_written_by_student(a) and a.source != b.source)
        for a, b in zip(sub.cells, graded.cells, strict=True)
    )


def _timestamp(folder: Path) -> str:
    path = folder / "timestamp.txt"
    return path.read_text(encoding="utf-8").strip() if path.is_file() else ""


def changed_submissions(dirs: CourseDirs, assignment: str, students: Sequence[str]) -> list[str]:
    """Graded students whose submission differs from what was graded (a notebook's cells or
    ``timestamp.txt``): nbgrader only regrades a newer ``timestamp.txt`` without ``--force``."""
    changed = []
    for student in students:
        sub = dirs.submitted / student / assignment
        graded = dirs.autograded / student / assignment
        if not graded.is_dir():
            continue
        if _timestamp(sub) != _timestamp(graded) or any(
            _notebook_changed(nb, graded / nb.name) for nb in sorted(sub.glob("*.ipynb"))
        ):
            changed.append(student)
    return changed


def missing_from_gradebook(db_url: str, assignment: str, outcomes: Outcomes) -> dict[str, str]:
    """Every graded or skipped student must have a submission in the gradebook.

    A graded one without is a failure; a skipped one without (its ``autograded/`` folder is
    there, its grades are not: a gradebook replaced or restored) is returned as out of date.
    """
    from nbgrader.api import Gradebook, MissingEntry

    missing: dict[str, str] = {}
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
    return missing
