"""Every CSV the course writes opens in a spreadsheet as data: a student id or a name starting
with = + - @ (or a tab, a carriage return) is neutralised with a leading ', every other value is
written unchanged (grading/french/csv_safe.py): the class report's notes.csv and `nbgrader
export`."""

from __future__ import annotations

import csv
import io
from datetime import datetime
from pathlib import Path

import pandas as pd
import pytest
from grading.french.csv_safe import FORMULA_STARTS, neutralise, neutralise_frame
from grading.report import class_table, write_report
from grading_course import copy_course, nbgrader
from nbgrader.api import Gradebook

HOSTILE = ["=2+5", "+cmd|' /C calc'!A0", "-2+3", "@SUM(1+1)", "\t=1", "\r=1"]
PLAIN = ["ana", "ben-durand", "o'connor", "Lefèvre, fils"]


@pytest.mark.parametrize("value", HOSTILE)
def test_formula_starts_are_neutralised(value):
    assert neutralise(value) == "'" + value


@pytest.mark.parametrize("value", [*PLAIN, "", "-1.5", "+3", "0", 7.5, None])
def test_other_values_are_unchanged(value):
    assert neutralise(value) == value


def test_every_text_column_of_a_frame_is_neutralised_whatever_its_dtype():
    """pandas 3 gives text its own dtype (`str`), not `object`: a column the report builds (the
    outcome read from a graded notebook, the reason) was written raw."""
    df = pd.DataFrame({"why": HOSTILE, "as_object": pd.Series(HOSTILE, dtype=object)})
    df["score"] = [-1.5, 2.0, 0.0, 1.0, 3.0, 4.0]
    out = neutralise_frame(df)
    assert list(out["why"]) == ["'" + v for v in HOSTILE]
    assert list(out["as_object"]) == ["'" + v for v in HOSTILE]
    assert list(out["score"]) == list(df["score"])  # numbers untouched
    assert list(df["why"]) == HOSTILE  # the caller's frame untouched


def _class(grader: Path) -> list[str]:
    """A gradebook (nbgrader's API) where each hostile id and each plain one has submitted."""
    students = [*HOSTILE, "ana", "ben"]
    with Gradebook(f"sqlite:///{grader / 'gradebook.db'}") as gb:
        gb.add_assignment("oublier", duedate=datetime(2025, 3, 14, 18))
        gb.add_notebook("oublier", "oublier")
        gb.add_grade_cell("test_sessions", "oublier", "oublier", max_score=1, cell_type="code")
        for k, student in enumerate(students):
            gb.add_student(student, first_name='=HYPERLINK("x")', last_name=f"Lefèvre, {k}")
            gb.add_submission("oublier", student, timestamp=datetime(2025, 3, 14, 12))
            grade = gb.find_grade("test_sessions", "oublier", "oublier", student)
            grade.auto_score = 1
            gb.db.commit()
    return students


def _read(path: Path) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


@pytest.mark.slow
def test_class_report_csv_is_neutralised(tmp_path):
    grader = copy_course(tmp_path / "cours")
    students = _class(grader)
    with Gradebook(f"sqlite:///{grader / 'gradebook.db'}") as gb:
        df = class_table(gb, "oublier", None)
    csv_path, html_path = write_report(df, tmp_path / "rapport")
    rows = {row["student_id"]: row for row in _read(csv_path)}
    assert sorted(rows) == sorted(neutralise(s) for s in students)
    for student in HOSTILE:
        row = rows["'" + student]
        assert row["first_name"] == '\'=HYPERLINK("x")'
        assert row["last_name"].startswith("Lefèvre, ")  # a comma, quoted: the columns hold
        assert float(row["score"]) == 1.0 and float(row["max_score"]) == 1.0
    assert rows["ana"]["first_name"] == '\'=HYPERLINK("x")' and rows["ben"]["score"] == "1.0"
    # the page shows the ids as they are (escaped for HTML, no quote added)
    assert "=2+5" in html_path.read_text(encoding="utf-8")
    # the French spreadsheet file too: every hostile cell is text, every row holds
    sheet = (tmp_path / "rapport" / "notes-tableur.csv").read_bytes().decode("utf-8-sig")
    french = list(csv.DictReader(io.StringIO(sheet, newline=""), delimiter=";"))
    assert sorted(r["identifiant"] for r in french) == sorted(neutralise(s) for s in students)
    for row in french:
        assert row["prénom"] == '\'=HYPERLINK("x")'
        assert not row["nom"].startswith(FORMULA_STARTS) and row["note"] == "1"


@pytest.mark.slow
def test_nbgrader_export_is_neutralised_and_keeps_nbgraders_columns(tmp_path):
    grader = copy_course(tmp_path / "cours")
    students = _class(grader)
    proc = nbgrader(grader, "export", "--to=grades.csv")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    text = (grader / "grades.csv").read_text(encoding="utf-8")
    assert text.splitlines()[0] == (
        "assignment,duedate,timestamp,student_id,last_name,first_name,email,raw_score,"
        "late_submission_penalty,score,max_score"
    )
    rows = {row["student_id"]: row for row in _read(grader / "grades.csv")}
    assert sorted(rows) == sorted(neutralise(s) for s in students)
    for student in students:
        row = rows[neutralise(student)]
        assert row["last_name"].startswith("Lefèvre, ") and row["email"] == ""
        assert row["first_name"] == '\'=HYPERLINK("x")'
        assert (row["raw_score"], row["score"], row["max_score"]) == ("1.0", "1.0", "1.0")
        assert row["timestamp"] == "2025-03-14 12:00:00" and row["assignment"] == "oublier"
    assert "'\r=1" in rows  # a CR inside an id is quoted: its row is whole


@pytest.mark.slow
def test_rows_are_those_of_nbgraders_own_export(tmp_path):
    """Without commas or formulas, SafeCsvExport writes exactly what stock nbgrader writes."""
    from grading.nbgrader_ext.safe_export import SafeCsvExport
    from nbgrader.plugins import CsvExportPlugin

    db = f"sqlite:///{tmp_path / 'gradebook.db'}"
    with Gradebook(db) as gb:
        gb.add_assignment("oublier", duedate=datetime(2025, 3, 14, 18))
        gb.add_assignment("lecons")
        gb.add_notebook("oublier", "oublier")
        gb.add_grade_cell("test_sessions", "oublier", "oublier", max_score=2, cell_type="code")
        for student, score in (("ana", 2), ("ben", 1)):
            gb.add_student(student, first_name=student.title(), last_name="Martin")
            gb.add_submission("oublier", student, timestamp=datetime(2025, 3, 15, 12))
            gb.find_grade("test_sessions", "oublier", "oublier", student).auto_score = score
            notebook = gb.find_submission_notebook("oublier", "oublier", student)
            notebook.late_submission_penalty = 1.0
            gb.db.commit()
        gb.add_student("cyr")  # no submission, no name
        CsvExportPlugin(to=str(tmp_path / "stock.csv")).export(gb)
        SafeCsvExport(to=str(tmp_path / "safe.csv")).export(gb)
    stock = (tmp_path / "stock.csv").read_text(encoding="utf-8").splitlines()
    safe = (tmp_path / "safe.csv").read_bytes().decode("utf-8")
    assert safe.split("\r\n") == [*stock, ""]  # the same lines, with RFC 4180's line ends
    assert len(stock) == 1 + 2 * 3  # two assignments, three students
