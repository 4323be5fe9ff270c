"""Hand grades survive a regrade when what they judged did not change: nbgrader 0.9.6's
``SaveAutoGrades`` sets ``needs_manual_grade`` on every grade with a manual score, so after
``autograde --force`` the whole class is « to grade » again. :func:`record` keeps them and
:func:`restore` marks graded again those whose answer (SHA-256) or test score is the same."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache, partial
from pathlib import Path

import nbformat
from nbgrader.api import Gradebook, MissingEntry

from ..nbgrader_ext.criterion_titles import criterion_title

__all__ = ["HandGrade", "pending_hand_grades", "record", "restore"]


@dataclass(frozen=True)
class HandGrade:
    student: str
    notebook: str
    name: str  # the grade cell's grade_id
    auto_score: float | None
    answer: str | None  # SHA-256 of the graded answer's text, None for a test cell


def _answers(autograded: Path, student: str, assignment: str, notebook: str) -> dict[str, str]:
    """grade_id -> SHA-256 of the source, for the solution grade cells of a graded copy."""
    path = autograded / student / assignment / f"{notebook}.ipynb"
    try:
        nb = nbformat.read(path, as_version=4)
    except Exception:  # no graded copy (or unreadable): nothing can be shown unchanged
        return {}
    out = {}
    for cell in nb.cells:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if meta.get("grade") and meta.get("solution") and meta.get("grade_id"):
            out[str(meta["grade_id"])] = hashlib.sha256(cell.source.encode()).hexdigest()
    return out


def record(
    db_url: str, autograded: Path, assignment: str, students: Sequence[str]
) -> list[HandGrade]:
    """The grades of `students` a grader has set and marked graded, before a regrade."""
    kept: list[HandGrade] = []
    with Gradebook(db_url) as gb:
        for sub in gb.assignment_submissions(assignment):
            if sub.student_id not in students:
                continue
            for nb in sub.notebooks:
                hand = [
                    g for g in nb.grades if g.manual_score is not None and not g.needs_manual_grade
                ]
                answers = _answers(autograded, sub.student_id, assignment, nb.name) if hand else {}
                kept += [
                    HandGrade(sub.student_id, nb.name, g.name, g.auto_score, answers.get(g.name))
                    for g in hand
                ]
    return kept


def restore(
    db_url: str, autograded: Path, assignment: str, kept: Sequence[HandGrade]
) -> str | None:
    """Mark `kept` graded again where unchanged; what it did, in French (None: no hand grade)."""
    restored, changed = 0, []
    hashes = cache(partial(_answers, autograded))  # one read per graded notebook
    with Gradebook(db_url) as gb:
        for hand in kept:
            try:
                grade = gb.find_grade(hand.name, hand.notebook, assignment, hand.student)
            except MissingEntry:
                continue
            if grade.manual_score is None or not grade.needs_manual_grade:
                continue
            if hand.answer is None:
                same = grade.auto_score == hand.auto_score
            else:
                same = hashes(hand.student, assignment, hand.notebook).get(hand.name) == hand.answer
            if same:
                grade.needs_manual_grade = False
                restored += 1
            else:
                changed.append(f"{hand.student} ({criterion_title(hand.name)})")
        gb.db.commit()
    if not restored and not changed:
        return None
    text = f"{restored} note(s) à la main gardée(s) comme notée(s) (réponse inchangée)."
    if changed:
        text += (
            " Réponse modifiée depuis la notation à la main, à revoir dans formgrader (note et "
            f"commentaire gardés)\u00a0: {', '.join(changed)}."
        )
    return text


def pending_hand_grades(gradebook, assignment: str) -> dict[str, list[tuple[str, str]]]:
    """student -> [(grade_id, cell type)] of the grades still waiting for a grader."""
    pending: dict[str, list[tuple[str, str]]] = {}
    for sub in gradebook.assignment_submissions(assignment):
        for grade in (g for nb in sub.notebooks for g in nb.grades if g.needs_manual_grade):
            pending.setdefault(sub.student_id, []).append((grade.name, str(grade.cell_type)))
    return pending
