"""The grade report: CSV and an offline HTML page with plots, from a real nbgrader gradebook."""

from __future__ import annotations

import csv
import re

import pytest
from nbgrader.api import Gradebook

from course.labo import TESTS
from course.labo.rapport import collect, criteria_failures, main, write_report

# student -> tests failed (every test is worth 1 point)
CLASS = {
    "ana": [],
    "ben": ["user_states", "user_states_cache", "fichier"],
    "cyr": ["user_states", "user_states_cache", "fichier"],
    "dou": ["fichier"],
}


@pytest.fixture(scope="module")
def gradebook_url(tmp_path_factory) -> str:
    url = f"sqlite:///{tmp_path_factory.mktemp('carnet') / 'gradebook.db'}"
    with Gradebook(url) as gb:
        gb.add_assignment("oublier")
        gb.add_notebook("oublier", "oublier")
        for test in TESTS.values():
            gb.add_grade_cell(
                test.grade_id, "oublier", "oublier", max_score=test.points, cell_type="code"
            )
        for student, failed in CLASS.items():
            gb.add_student(student)
            gb.add_submission("oublier", student)
            for test in TESTS.values():
                grade = gb.find_grade(test.grade_id, "oublier", "oublier", student)
                grade.auto_score = 0 if test.id in failed else test.points
            gb.db.commit()
    return url


def test_collect_reads_scores_per_student_and_test(gradebook_url):
    df = collect(gradebook_url, "oublier")
    assert list(df["student_id"]) == ["ana", "ben", "cyr", "dou"]
    assert list(df["score"]) == [10, 7, 7, 9]
    assert df.loc[df.student_id == "ben", "test_user_states"].item() == 0


def test_failure_share_per_criterion(gradebook_url):
    shares = criteria_failures(collect(gradebook_url, "oublier"))
    assert shares.index[0].startswith("Plus rien de l'élève")  # 3 of 4 miss the VACUUM
    assert shares.iloc[0] == pytest.approx(0.75)
    assert shares["Sa ligne user_states (l'état user:) a disparu"] == pytest.approx(0.5)
    assert shares["Toutes les sessions de l'élève dans l'application du tuteur ont disparu"] == 0


def test_report_files_are_complete_and_offline(gradebook_url, tmp_path):
    csv_path, html_path = write_report(collect(gradebook_url, "oublier"), tmp_path / "r")
    with open(csv_path, newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert [r["student_id"] for r in rows] == list(CLASS) and rows[1]["score"] == "7.0"
    page = html_path.read_text(encoding="utf-8")
    images = re.findall(
        r'<img alt="[^"]+"\s+src="data:image/png;base64,([A-Za-z0-9+/=]{500,})"', page
    )
    assert len(images) == 2
    assert not re.search(r"(src|href)=\"(https?:)?//", page)  # nothing fetched from a network
    assert "4 rendus notés" in page and "75%" in page


def test_cli_and_unknown_assignment(gradebook_url, tmp_path, capsys):
    assert main(["--db", gradebook_url, "--out", str(tmp_path / "out")]) == 0
    assert (tmp_path / "out" / "rapport.html").exists()
    with pytest.raises(ValueError, match="pas dans le carnet de notes"):
        collect(gradebook_url, "inexistant")
