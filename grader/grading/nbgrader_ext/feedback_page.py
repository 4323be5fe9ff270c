"""The French feedback page: its Jinja filters, and the student it is for named in its header (a
page forwarded says whose it is; nbgrader gives the template the id only)."""

from __future__ import annotations

import re
from contextlib import suppress

from nbconvert.preprocessors import Preprocessor
from nbgrader.api import Gradebook, MissingEntry
from traitlets import Bool

from course.labo.french_number import french_number

__all__ = ["PendingGrades", "StudentName", "code_spans", "points", "student_name"]

_CODE = re.compile(r"`([^`\n<>]+)`")


def student_name(first_name: str | None, last_name: str | None, student_id: str) -> str:
    """« Chloé Roux (chloé) », or the id alone when the gradebook has no name."""
    name = " ".join(part.strip() for part in (first_name, last_name) if part and part.strip())
    return f"{name} ({student_id})" if name else student_id


class StudentName(Preprocessor):
    """After ``GetGrades``: the gradebook's names in ``resources.nbgrader.student_name`` (the
    template escapes them: names are untrusted)."""

    # nbgrader registers its converters' preprocessors as they are: nbconvert's default (off)
    # would leave this one out, as nbgrader's own preprocessors default to on
    enabled = Bool(True).tag(config=True)

    def preprocess(self, nb, resources):
        info = resources.get("nbgrader", {})
        student_id, db_url = info.get("student"), info.get("db_url")
        if student_id is None:
            return nb, resources
        first = last = None
        if db_url:
            with suppress(MissingEntry), Gradebook(db_url) as gradebook:
                student = gradebook.find_student(student_id)
                first, last = student.first_name, student.last_name
        info["student_name"] = student_name(first, last, str(student_id))
        return nb, resources


class PendingGrades(Preprocessor):
    """After ``GetGrades``: each grade still to give by hand (``needs_manual_grade``: the written
    answer before formgrader) marked ``pending``, their count in ``resources.nbgrader.pending``;
    the page says « à noter » and « note provisoire », never 0 / 2 as if it were graded."""

    enabled = Bool(True).tag(config=True)  # as StudentName

    def preprocess(self, nb, resources):
        info = resources.get("nbgrader", {})
        keys = [info.get(k) for k in ("student", "notebook", "assignment", "db_url")]
        if None in keys:
            return nb, resources
        student_id, notebook, assignment, db_url = keys
        info["pending"] = 0
        with Gradebook(db_url) as gradebook:
            for meta in (c.metadata.get("nbgrader", {}) for c in nb.cells):
                with suppress(MissingEntry):
                    if (
                        meta.get("grade")
                        and gradebook.find_grade(
                            meta["grade_id"], notebook, assignment, student_id
                        ).needs_manual_grade
                    ):
                        meta["pending"] = True
                        info["pending"] += 1
        return nb, resources


def code_spans(escaped_html: str) -> str:
    """`x` -> <code>x</code> in text already escaped for HTML (nbconvert's ansi2html output)."""
    return _CODE.sub(r"<code>\1</code>", escaped_html)


def points(value: object) -> str:
    """A score as a French reader writes it: 10, 7,5, 0,25 (two decimals at most)."""
    try:
        number = round(float(value), 2)
    except (TypeError, ValueError):
        return "—"
    return french_number(number)
