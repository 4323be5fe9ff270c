"""The class report is nbgrader's export plus what an instructor needs at a glance: every student
of the gradebook, the totals of `nbgrader export` (late penalties, 0 without a submission),
criteria by their French titles, names, lateness, and why a 0 is a 0."""

from __future__ import annotations

import base64
import csv
import io
import re
import subprocess
from datetime import datetime
from pathlib import Path

import nbformat
import pytest
from grading.classroom.paths import load_config
from grading.nbgrader_ext.criterion_titles import criterion_title
from grading.nbgrader_ext.export_choice import CLASS_REPORT_ENV
from grading.nbgrader_ext.late_penalty import PointsPerDayLate, rule, rule_of_config
from grading.nbgrader_ext.outcome_record import METADATA_KEY as OUTCOME_KEY
from grading_course import copy_course, grading, nbgrader
from helpers import REPO
from nbgrader.api import Gradebook
from PIL import Image

DUE = datetime(2025, 3, 14, 18, 0)
TIMEOUT_DETAIL = "oublier n'a pas terminé en 10\u00a0s\u00a0: aucun critère n'a pu être vérifié."
# « Pourquoi » speaks to the teacher, then quotes what the student was told
TIMEOUT_WHY = (
    "le code de l'élève a dépassé la limite de temps (boucle sans fin ou attente) "
    f"(message donné à l'élève\u00a0: «\u00a0{TIMEOUT_DETAIL}\u00a0»)"
)


def _grade_cells(solution: Path) -> dict[str, float]:
    """grade_id -> points of the TP's graded test cells, read from its source notebook."""
    nb = nbformat.read(solution, as_version=4)
    cells = {}
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("grade") and not meta.get("solution"):
            cells[meta["grade_id"]] = float(meta["points"])
    return cells


# student -> (first, last, submitted at, which grade cells fail, late penalty)
CLASS = {
    "ana": ("Ana", "Martin", datetime(2025, 3, 14, 17, 0), lambda ids: [], 0.0),
    "ben": ("Ben", "Durand", datetime(2025, 3, 16, 6, 0), lambda ids: ids[-1:], 2.0),
    "cyr": ("Cyr", "Petit", datetime(2025, 3, 14, 12, 0), lambda ids: ids, 0.0),
    "dou": ("Dou", "Leroy", None, None, 0.0),  # no submission
    "eve": ("", "", datetime(2025, 3, 17, 19, 0), lambda ids: ids[1:], 1.0),  # 1 point left
}


@pytest.fixture
def gradebook_class(tmp_path) -> Path:
    """A course whose gradebook holds the class above, for a test that changes it."""
    return _gradebook_class(tmp_path / "cours")


@pytest.fixture(scope="module")
def reported_class(tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess]:
    """The class above and its report, written once by make rapport's command (defaults from the
    current folder) for the tests that read it: its grader/ folder and that command's run."""
    grader = _gradebook_class(tmp_path_factory.mktemp("rapport") / "cours")
    return grader, grading(grader, "rapport")


def _gradebook_class(dest: Path) -> Path:
    """A course copy in `dest` whose gradebook holds the class above (written with nbgrader's
    API), and an autograded copy for each submission: cyr's says it timed out (as the lab's
    grading records it), the others carry no grading metadata. Its grader/ folder."""
    grader = copy_course(dest)
    cells = _grade_cells(grader.parent / "solutions" / "oublier" / "oublier.ipynb")
    with Gradebook(f"sqlite:///{grader / 'gradebook.db'}") as gb:
        gb.add_assignment("oublier", duedate=DUE)
        gb.add_notebook("oublier", "oublier")
        for grade_id, points in cells.items():
            gb.add_grade_cell(grade_id, "oublier", "oublier", max_score=points, cell_type="code")
        for student, (first, last_name, when, failed, penalty) in CLASS.items():
            gb.add_student(student, first_name=first, last_name=last_name)
            if when is None:
                continue
            gb.add_submission("oublier", student, timestamp=when)
            lost = failed(list(cells))
            for grade_id, points in cells.items():
                grade = gb.find_grade(grade_id, "oublier", "oublier", student)
                grade.auto_score = 0 if grade_id in lost else points
                grade.needs_manual_grade = False  # as SaveAutoGrades leaves a scored code cell
            notebook = gb.find_submission_notebook("oublier", "oublier", student)
            notebook.late_submission_penalty = penalty or None
            gb.db.commit()
    copies = {
        "ana": None,
        "ben": None,
        "eve": None,
        "cyr": {"outcome": "timeout", "detail": TIMEOUT_DETAIL},
    }
    for student, meta in copies.items():
        folder = grader / "autograded" / student / "oublier"
        folder.mkdir(parents=True)
        nb = nbformat.v4.new_notebook()
        if meta:
            nb.metadata[OUTCOME_KEY] = meta
        nbformat.write(nb, folder / "oublier.ipynb")
    return grader


def _rows(path: Path) -> dict[str, dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as fh:
        return {row["student_id"]: row for row in csv.DictReader(fh)}


@pytest.mark.slow
def test_report_totals_are_those_of_nbgrader_export(gradebook_class):
    grader = gradebook_class
    export = nbgrader(grader, "export", "--to=grades.csv")
    assert export.returncode == 0, export.stderr
    report = nbgrader(
        grader, "export", "--exporter=grading.report.ClassReport", "--assignment=oublier"
    )
    assert report.returncode == 0, report.stdout + report.stderr
    theirs, ours = _rows(grader / "grades.csv"), _rows(grader / "rapport" / "notes.csv")
    assert sorted(ours) == sorted(theirs) == sorted(CLASS)  # dou, who did not submit, is there
    for student in CLASS:
        for column in ("raw_score", "late_submission_penalty", "score", "max_score"):
            assert float(ours[student][column]) == float(theirs[student][column]), (
                student,
                column,
            )
    assert float(ours["dou"]["score"]) == 0
    assert float(ours["ben"]["score"]) == float(ours["ben"]["raw_score"]) - 2
    assert float(ours["eve"]["score"]) == 0 < float(ours["eve"]["raw_score"])
    assert ours["dou"]["why"] == "pas de rendu"
    assert ours["cyr"]["why"] == TIMEOUT_WHY and ours["cyr"]["outcome"] == "timeout"
    assert ours["ana"]["outcome"] == "graded" and ours["ana"]["why"] == ""
    assert ours["eve"]["why"] == "note ramenée à 0 par la pénalité de retard"


@pytest.mark.slow
def test_report_page_says_it_at_a_glance(reported_class):
    grader, proc = reported_class
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "5 élève(s), 4 avec un rendu, 1 sans." in proc.stdout
    page = (grader / "rapport" / "rapport.html").read_text(encoding="utf-8")
    text = re.sub(r"<[^>]+>", " ", page.replace("&#x27;", "'"))
    assert "Ana Martin" in text and "Ben Durand" in text
    assert "1 j 12 h (−2\u00a0pt)" in text and "3 j 1 h (−1\u00a0pt)" in text
    assert "à l'heure" in text
    assert rule(1.0) in text  # the late rule the configuration applies
    assert TIMEOUT_DETAIL in text and "pas de rendu" in text
    cells = _grade_cells(grader.parent / "solutions" / "oublier" / "oublier.ipynb")
    for title in {criterion_title(g) for g in cells}:
        assert title in text
    assert not re.search(r"\btest_\w+", text)  # no raw grade ids
    assert not re.search(r"(src|href)=\"(https?:)?//", page)  # nothing fetched from a network
    images = re.findall(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', page)
    assert len(images) == 2
    for data in images:
        width, _ = Image.open(io.BytesIO(base64.b64decode(data))).size
        assert width <= 1000  # fits the 1100 px page at 1280 px


@pytest.mark.slow
def test_export_plugin_needs_one_assignment_and_says_so(gradebook_class):
    grader = gradebook_class
    with Gradebook(f"sqlite:///{grader / 'gradebook.db'}") as gb:
        gb.add_assignment("lecons")
    proc = nbgrader(grader, "export", "--exporter=grading.report.ClassReport")
    assert proc.returncode != 0
    assert "précisez --assignment" in proc.stdout + proc.stderr
    proc = grading(grader, "rapport", "inexistant")
    said = "Le devoir «\u00a0inexistant\u00a0» n'est pas dans le carnet de notes"
    assert proc.returncode == 1 and said in proc.stderr, proc.stderr


def test_late_rule_one_point_per_started_day(tmp_path):
    plugin = PointsPerDayLate()
    assert plugin.late_submission_penalty("ana", 7.0, 0) is None
    assert plugin.late_submission_penalty("ana", 7.0, 60) == 1
    assert plugin.late_submission_penalty("ana", 7.0, 86400) == 1
    assert plugin.late_submission_penalty("ana", 7.0, 86401) == 2
    assert plugin.late_submission_penalty("ana", 0.5, 10 * 86400) == 0.5  # never below 0
    config = load_config(copy_course(tmp_path / "cours"))
    assert rule_of_config(config) == rule(1.0)
    assert rule(1.0) == (
        "Rendu en retard\u00a0: chaque jour de retard commencé retire 1 point à la note, "
        "sans descendre sous 0."
    )


@pytest.mark.parametrize("folder", ["solutions", "notebooks"])
def test_the_statement_states_the_configured_late_rule(tmp_path, folder):
    """The student reads, in the TP itself, the rule nbgrader_config.py applies."""
    config = load_config(copy_course(tmp_path / "cours"))
    notebook = nbformat.read(REPO / folder / "oublier" / "oublier.ipynb", as_version=4)
    markdown = "\n".join(cell.source for cell in notebook.cells if cell.cell_type == "markdown")
    statement = re.sub(r"[ \n]+", " ", markdown)  # a line break renders as a space
    assert rule_of_config(config) in statement


def _add_accented_class(grader: Path) -> None:
    """élodie, éloïse and emma registered without a submission; ana's score gets a half point
    off by hand (9,5), so a decimal shows."""
    with Gradebook(f"sqlite:///{grader / 'gradebook.db'}") as gb:
        for student in ("éloïse", "emma", "élodie"):
            gb.add_student(student, first_name=student.capitalize(), last_name="Roux")
        submission = gb.find_submission_notebook("oublier", "oublier", "ana")
        grade = submission.grades[0]
        grade.manual_score = grade.max_score - 0.5
        gb.db.commit()


FRENCH_ORDER = ["ana", "ben", "cyr", "dou", "élodie", "éloïse", "emma", "eve"]


def _french_rows(path: Path) -> list[dict[str, str]]:
    data = path.read_bytes()
    assert data.startswith(b"\xef\xbb\xbf")  # the BOM French Excel needs to read UTF-8
    assert b"\r\n" in data
    return list(csv.DictReader(io.StringIO(data.decode("utf-8-sig"), newline=""), delimiter=";"))


@pytest.mark.slow
def test_report_spreadsheet_file_is_french(gradebook_class):
    grader = gradebook_class
    _add_accented_class(grader)
    proc = grading(grader, "rapport")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = _french_rows(grader / "rapport" / "notes-tableur.csv")
    assert [r["identifiant"] for r in rows] == FRENCH_ORDER  # éloïse not last
    by_id = {r["identifiant"]: r for r in rows}
    ana, ben, cyr, dou = by_id["ana"], by_id["ben"], by_id["cyr"], by_id["dou"]
    zone = "fuseau Europe/Paris"
    # 17:00 UTC is 18:00 in Paris in March (UTC+1); the due date 18:00 UTC is 19:00 there
    assert ana[f"heure de rendu ({zone})"] == "14/03/2025 18:00"
    assert ana[f"date limite ({zone})"] == "14/03/2025 19:00"
    assert ana["note brute"] == ana["note"] == "9,5" and ana["note maximale"] == "10"
    assert ana["rendu"] == "oui" and ana["état"] == "noté" and ana["retard"] == "à l'heure"
    assert dou["rendu"] == "non" and dou["état"] == "pas de rendu" and dou["retard"] == "—"
    assert ben["pénalité de retard"] == "2" and ben["retard"] == "1 j 12 h (−2\u00a0pt)"
    assert cyr["état"] == "limite de temps dépassée" and cyr["pourquoi"] == TIMEOUT_WHY
    values = {v for r in rows for v in r.values()}
    assert not values & {"graded", "timeout", "no_submission", "True", "False", "9.5"}
    cells = _grade_cells(grader.parent / "solutions" / "oublier" / "oublier.ipynb")
    titles = {criterion_title(g) for g in cells}
    criteria = {
        re.sub(r"^critère \d+ — (.*) \(sur [\d,]+\)$", r"\1", h) for h in rows[0] if h.endswith(")")
    }
    assert titles <= criteria and not [h for h in rows[0] if h.startswith("test_")]
    # the page writes numbers as the file does: one format, heading and table alike
    page = (grader / "rapport" / "rapport.html").read_text(encoding="utf-8")
    assert "9,5 / 10" in page and "9.5" not in page
    mean = re.search(r"Moyenne (\S+) / (\S+),", page)
    assert mean and "." not in mean.group(1), page[:2000]
    assert "Date limite\u00a0: 14/03/2025 19:00 (Europe/Paris)" in page
    order = [re.escape(f"<td>{s}</td>") for s in FRENCH_ORDER]
    assert re.search(".*".join(order), page, re.S)  # the table in French order too
    # notes.csv, for scripts, keeps nbgrader's columns and values
    assert _rows(grader / "rapport" / "notes.csv")["ana"]["raw_score"] == "9.5"


@pytest.mark.slow
def test_export_and_report_of_a_class_nobody_is_registered_in_say_so(tmp_path):
    """Left at stop 43: `make export` on a gradebook that registers nobody (the class not yet
    enrolled, or enrolled into another gradebook) said « Notes exportées : 0 ligne(s) » and
    exited 0, as if the class had no grade. Both commands now say that nobody is registered
    and how to register the class, and write nothing. `make report`, and `make duedate`, also
    made an empty gradebook in place of a lost one. Control: one registered learner is
    exported."""
    grader = copy_course(tmp_path / "cours")
    with Gradebook(f"sqlite:///{grader / 'gradebook.db'}") as gb:
        gb.add_assignment("oublier", duedate=DUE)
    for command in ("export", "rapport"):
        proc = grading(grader, command)
        said = proc.stdout + proc.stderr
        assert proc.returncode == 2, said
        assert "aucun élève n'est inscrit" in said and "make students" in said, said
        assert "Traceback" not in said, said
    assert not (grader / "rapport" / "grades.csv").exists()
    assert not (grader / "rapport" / "rapport.html").exists()
    (grader / "gradebook.db").rename(grader / "ailleurs.db")  # a lost gradebook
    lost = grading(grader, "rapport")
    assert lost.returncode == 2 and "introuvable" in lost.stdout + lost.stderr, lost.stderr
    assert not (grader / "gradebook.db").exists()  # no empty one made in its place
    # teacher's walk, stop 56: make duedate made an empty one, and the restore was then refused
    due = grading(grader, "duedate", "oublier", "2025-03-14 18:00:00 Europe/Paris")
    said = due.stdout + due.stderr
    assert due.returncode == 2 and "non fixée" in said and "introuvable" in said, said
    assert not (grader / "gradebook.db").exists()
    (grader / "ailleurs.db").rename(grader / "gradebook.db")
    with Gradebook(f"sqlite:///{grader / 'gradebook.db'}") as gb:
        gb.add_student("ana", first_name="Ana", last_name="Martin")
    proc = grading(grader, "export")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "1 élève(s)" in proc.stdout


@pytest.mark.slow
def test_export_and_duedate_speak_french_and_keep_nbgraders_file(gradebook_class, monkeypatch):
    grader = gradebook_class
    _add_accented_class(grader)
    due = grading(grader, "duedate", "oublier", "2025-03-14 18:00:00 Europe/Paris")
    assert due.returncode == 0, due.stdout + due.stderr
    said = "Date limite de «\u00a0oublier\u00a0»\u00a0: 14/03/2025 18:00 (Europe/Paris)"
    assert said in due.stdout
    assert "| INFO]" not in due.stdout + due.stderr  # nbgrader's English lines: in the log only
    assert "Creating/updating assignment" in (grader / "rapport" / "duedate.log").read_text()
    naive = grading(grader, "duedate", "oublier", "2025-03-14 18:00:00")
    assert naive.returncode == 0 and "14/03/2025 19:00 (Europe/Paris)" in naive.stdout
    assert "sans fuseau" in naive.stdout and "| INFO]" not in naive.stdout + naive.stderr
    # the class report's switch left set in the teacher's shell: still nbgrader's CSV
    monkeypatch.setenv(CLASS_REPORT_ENV, "1")
    proc = grading(grader, "export")
    monkeypatch.delenv(CLASS_REPORT_ENV)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Notes exportées\u00a0: 8 ligne(s), 8 élève(s), 1 devoir(s)." in proc.stdout
    assert "| INFO]" not in proc.stdout + proc.stderr
    stock = nbgrader(grader, "export", "--to=stock.csv")
    assert stock.returncode == 0, stock.stdout + stock.stderr
    assert (grader / "rapport" / "grades.csv").read_bytes() == (grader / "stock.csv").read_bytes()
    rows = _french_rows(grader / "rapport" / "export-tableur.csv")
    assert [r["identifiant"] for r in rows] == FRENCH_ORDER
    ana = rows[0]
    assert ana["devoir"] == "oublier" and ana["note"] == "9,5"
    assert ana["date limite (fuseau Europe/Paris)"] == "14/03/2025 19:00"
    bad = grading(grader, "duedate", "oublier", "pas une date")
    assert bad.returncode == 1 and "✘ date limite" in bad.stderr and "| INFO]" not in bad.stderr


@pytest.mark.slow
def test_report_numbers_criteria_as_the_statement(reported_class):
    """Issue 33, point 7: the report's « critère N » is the TP statement's criterion N (its table,
    ``statement_table``), in the page, its chart and the spreadsheet file; the histogram has one
    bar per half point (11,5 and 12 are two bars)."""
    import html

    import numpy as np
    from grading.report import score_bins

    from course.labo.criteria import statement_table

    grader, proc = reported_class
    assert proc.returncode == 0, proc.stdout + proc.stderr
    page = (grader / "rapport" / "rapport.html").read_text(encoding="utf-8")
    header = next(
        csv.reader(
            (grader / "rapport" / "notes-tableur.csv").read_text(encoding="utf-8-sig").splitlines(),
            delimiter=";",
        )
    )
    for numbered, _points, _ in statement_table():
        number, title = numbered.split(". ", 1)
        assert f"<td>critère {number}</td><td>{html.escape(title)}</td>" in page, numbered
        assert any(h.startswith(f"critère {number} — {title} (sur ") for h in header), numbered
    # ben lost the last graded cell: it is named by its statement number
    cells = _grade_cells(grader.parent / "solutions" / "oublier" / "oublier.ipynb")
    last = criterion_title(list(cells)[-1])
    number = next(n.split(".")[0] for n, _, _ in statement_table() if n.endswith(last))
    row = re.search(r"<td>ben</td>.*?</tr>", page, re.S).group(0)
    assert f'<abbr title="{html.escape(last)}">critère {number}</abbr>' in row, row
    # the histogram's bins: 11,5 and 12 apart, 12 and 12 together
    counts, _ = np.histogram([11.5, 12, 12], bins=score_bins(12))
    assert sorted(c for c in counts if c) == [1, 2]
    counts, _ = np.histogram([0, 0.5, 11.5, 12], bins=score_bins(12))
    assert list(counts).count(1) == 4


@pytest.mark.slow
def test_a_submission_left_out_of_the_grading_is_no_missing_submission(gradebook_class):
    """gil handed in a notebook make grade did not grade (« extra.ipynb », not one of the TP's:
    dpo attack, item 11): `make rapport` says it was handed in and not graded, never « pas de
    rendu »; the control: dou, without a folder in submitted/, still has « pas de rendu »."""
    grader = gradebook_class
    with Gradebook(f"sqlite:///{grader / 'gradebook.db'}") as gb:
        gb.add_student("gil", first_name="Gil", last_name="Roux")
    folder = grader / "submitted" / "gil" / "oublier"
    folder.mkdir(parents=True)
    nbformat.write(nbformat.v4.new_notebook(), folder / "extra.ipynb")
    proc = grading(grader, "rapport", "oublier")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "6 élève(s), 5 avec un rendu, 1 sans." in proc.stdout
    by_id = {r["identifiant"]: r for r in _french_rows(grader / "rapport" / "notes-tableur.csv")}
    gil, dou = by_id["gil"], by_id["dou"]
    assert gil["rendu"] == "oui" and gil["état"] == "pas de copie notée", gil
    assert gil["pourquoi"].startswith("rendu non noté\u00a0: il est dans submitted/"), gil
    assert gil["note"] == "0" and gil["retard"] == "—"
    assert dou["rendu"] == "non" and dou["état"] == "pas de rendu", dou
    page = (grader / "rapport" / "rapport.html").read_text(encoding="utf-8")
    assert "5 avec un rendu, 1 sans rendu" in page


def test_a_criterion_still_to_grade_by_hand_is_not_missed_by_the_class():
    """Teacher's walk, stop 56: before any written answer was graded in formgrader, the report's
    « Ce que la classe a manqué » gave the written answer « manqué par 100 % » of the class,
    while each row said « réponse écrite à noter ». A grade still to give is not counted; once
    one of two is given (and lost), 100 % of those graded missed it."""
    import pandas as pd
    from grading.report import _criteria_failures

    df = pd.DataFrame(
        {"student_id": ["ana", "ben"], "submitted": [True, True], "code": [1.0, 0.0], "écrit": 0.0}
    )
    df.attrs["criteria"] = {"code": 1.0, "écrit": 2.0}
    waiting = {"écrit": "réponse écrite à noter"}
    df.attrs["pending"] = {"ana": waiting, "ben": waiting}
    assert _criteria_failures(df).to_dict() == {"code": 0.5, "écrit": 0.0}
    df.attrs["pending"] = {"ben": waiting}  # ana's graded by hand: 0 / 2
    assert _criteria_failures(df).to_dict() == {"écrit": 1.0, "code": 0.5}
