"""Parallel autograde: each worker has its own gradebook copy; results merged into the real one
give the same grades as stock sequential nbgrader (the expected scores of the samples)."""

from __future__ import annotations

import sqlite3
import tempfile

import pytest
from grading.autograde import autograde
from grading.samples import write_all
from nbgrader.api import Gradebook

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

SAMPLES = ["complete_vacuum", "graine", "fstring", "ebauche", "user_states_sans_where"]


def test_parallel_autograde_gives_expected_grades(course, expected_scores, tmp_path, monkeypatch):
    # a temporary folder of its own: other tests run beside this one (pytest-xdist)
    private_tmp = tmp_path / "tmp"
    private_tmp.mkdir()
    monkeypatch.setenv("TMPDIR", str(private_tmp))
    monkeypatch.setattr(tempfile, "tempdir", str(private_tmp))
    students = write_all(course.parent, course / "submitted", only=SAMPLES)
    # registered through nbgrader's own API, as `nbgrader db student import` does, without
    # starting nbgrader once more (the command itself: tests/grading/test_roster_csv.py)
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        for student in students:
            gb.update_or_create_student(student)

    summary = autograde("oublier", course, jobs=2)

    assert summary.ok and summary.jobs == 2
    assert sorted(summary.outcomes.done) == sorted(SAMPLES)
    assert not summary.outcomes.skipped and not summary.outcomes.failed
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        scores = {s: gb.find_submission("oublier", s).score for s in SAMPLES}
    assert scores == {s: expected_scores[s]["score"] for s in SAMPLES}
    conn = sqlite3.connect(course / "gradebook.db")
    assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    conn.close()
    for s in SAMPLES:  # the autograded notebooks are in the real folder, not a worker's
        assert (course / "autograded" / s / "oublier" / "oublier.ipynb").exists()
    assert not list(private_tmp.glob("autograde-parallele-*"))  # the workers' copies removed
