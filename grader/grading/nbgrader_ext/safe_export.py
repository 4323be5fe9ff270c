"""``ExportApp.plugin_class`` (nbgrader_config.py): nbgrader's CSV export, every field neutralised
(``french.csv_safe``) and quoted: stock nbgrader joins fields with commas and no quoting, so a
comma in a name shifted every column."""

from __future__ import annotations

import csv

from nbgrader.api import Gradebook, MissingEntry
from nbgrader.plugins import CsvExportPlugin

from ..french.csv_safe import EXPORT_KEYS, LINE_END, neutralise
from .late_penalty import refresh_penalties

__all__ = ["SafeCsvExport"]


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
        refresh_penalties(gradebook, self.config)
        dest = self.to or "grades.csv"
        self.log.info("Exporting grades to %s", dest)
        with open(dest, "w", newline="", encoding="utf-8") as fh:
            writer = csv.writer(fh, lineterminator=LINE_END)
            writer.writerow(EXPORT_KEYS)
            for row in self.rows(gradebook):
                writer.writerow([neutralise(row[k]) for k in EXPORT_KEYS])
