"""Parallel autograde: each worker has its own gradebook copy; results merged into the real one
give the same grades as stock sequential nbgrader (the expected scores of the samples)."""

from __future__ import annotations

import shutil
import sqlite3
import tempfile
from pathlib import Path

import pytest
from nbgrader.api import Gradebook

from course.labo.classe import autograde
from course.labo.soumissions import write_all

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

SAMPLES = ["complete_vacuum", "graine", "fstring", "ebauche", "user_states_sans_where"]


def test_parallel_autograde_gives_expected_grades(
    tmp_path, repo_root, run_nbgrader, expected_scores, capsys
):
    root = tmp_path / "cours"
    shutil.copytree(repo_root / "solutions" / "oublier", root / "solutions" / "oublier")
    grader = root / "grader"
    grader.mkdir()
    shutil.copy(repo_root / "grader" / "nbgrader_config.py", grader)
    shutil.copytree(repo_root / "grader" / "grading", grader / "grading")  # the grading hooks
    shutil.copytree(repo_root / "grader" / "submissions", grader / "submissions")
    assert run_nbgrader(grader, "generate_assignment", "oublier").returncode == 0
    students = write_all(root, grader / "submitted", only=SAMPLES)
    (grader / "eleves.csv").write_text("id\n" + "".join(f"{s}\n" for s in students))
    assert run_nbgrader(grader, "db", "student", "import", "eleves.csv").returncode == 0
    before = set(Path(tempfile.gettempdir()).glob("autograde-parallele-*"))

    assert autograde("oublier", grader, jobs=2) == 0

    out = capsys.readouterr()
    assert f"{len(SAMPLES)} rendus en" in out.out and "2 processus" in out.out
    assert "autograde oublier" in out.err and f"{len(SAMPLES)}/{len(SAMPLES)}" in out.err
    with Gradebook(f"sqlite:///{grader / 'gradebook.db'}") as gb:
        scores = {s: gb.find_submission("oublier", s).score for s in SAMPLES}
    assert scores == {s: expected_scores[s]["score"] for s in SAMPLES}
    conn = sqlite3.connect(grader / "gradebook.db")
    assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    conn.close()
    for s in SAMPLES:  # the autograded notebooks are in the real folder, not a worker's
        assert (grader / "autograded" / s / "oublier" / "oublier.ipynb").exists()
    assert set(Path(tempfile.gettempdir()).glob("autograde-parallele-*")) == before
