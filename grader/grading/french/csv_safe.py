"""CSV files a spreadsheet opens as data, never as formulas.

A student id comes from a folder name and is hostile: ``=HYPERLINK(...)`` written raw into
``notes.csv`` is a formula in a spreadsheet. Every CSV the course writes goes through
:func:`neutralise` (OWASP: a text cell starting with ``= + - @``, a tab or a CR gets a leading
``'``). ``make export`` writes with :class:`SafeCsvExport` (``ExportApp.plugin_class``): stock
nbgrader joins fields with commas and no quoting, so a comma in a name shifted every column.
"""

from __future__ import annotations

import csv

import pandas as pd
from nbgrader.api import Gradebook, MissingEntry
from nbgrader.plugins import CsvExportPlugin

from .french_csv import PERSON_KEYS, SCORE_KEYS

__all__ = ["FORMULA_STARTS", "LINE_END", "SafeCsvExport", "neutralise", "neutralise_frame"]

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
# RFC 4180's line end: the csv module then quotes a field holding a lone CR or LF (with "\n"
# alone, a CR inside an id was written bare and split its row in two).
LINE_END = "\r\n"
EXPORT_KEYS = ["assignment", "duedate", "timestamp", *PERSON_KEYS, *SCORE_KEYS]  # nbgrader's


def neutralise(value: object) -> object:
    """Text that would start a formula gets a ``'``; a number as text (``-1.5``) stays one."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS) and not _is_number(value):
        return "'" + value
    return value


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return text.strip() == text


def neutralise_frame(df: pd.DataFrame) -> pd.DataFrame:
    """A copy of `df` with every text cell neutralised (numbers are left as they are)."""
    out = df.copy()
    for column in out.columns:
        # pandas 3 gives text its own dtype (`str`): `== object` alone let it through raw
        if not pd.api.types.is_numeric_dtype(out[column]):
            out[column] = out[column].map(neutralise)
    out.columns = [neutralise(str(c)) for c in out.columns]
    return out


class SafeCsvExport(CsvExportPlugin):
    """nbgrader's CSV export (same columns, rows, scores), every field neutralised and quoted."""

    def rows(self, gradebook: Gradebook) -> list[dict[str, str]]:
        """One row per (assignment, student), as nbgrader's ``CsvExportPlugin`` computes it."""
        wanted_students = {str(s) for s in self.student}
        wanted_assignments = {str(a) for a in self.assignment}
        students = [s for s in gradebook.students if not wanted_students or s.id in wanted_students]
        rows = []
        for assignment in gradebook.assignments:
            if wanted_assignments and assignment.name not in wanted_assignments:
                continue
            for student in students:
                try:
                    sub = gradebook.find_submission(assignment.name, student.id)
                except MissingEntry:
                    done = ("", 0.0, 0.0, 0.0)
                else:
                    penalty = sub.late_submission_penalty
                    done = (sub.timestamp, sub.score, penalty, max(0.0, sub.score - penalty))
                who = (student.id, student.last_name, student.first_name, student.email)
                values = (assignment.name, assignment.duedate, done[0], *who, *done[1:])
                values += (assignment.max_score,)
                row = zip(EXPORT_KEYS, values, strict=True)
                rows.append({k: "" if v is None else str(v) for k, v in row})
        return rows

    def export(self, gradebook: Gradebook) -> None:
        dest = self.to or "grades.csv"
        self.log.info("Exporting grades to %s", dest)
        with open(dest, "w", newline="", encoding="utf-8") as fh:
            writer = csv.writer(fh, lineterminator=LINE_END)
            writer.writerow(EXPORT_KEYS)
            for row in self.rows(gradebook):
                writer.writerow([neutralise(row[k]) for k in EXPORT_KEYS])
