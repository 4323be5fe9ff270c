"""Submissions gathered outside a hub: a zip of several students (one folder per student, as the
grading guide says) goes into grader/submitted/ with stock `nbgrader zip_collect`; a second zip
never silently replaces a submission already there."""

from __future__ import annotations

import zipfile

import nbformat
import pytest
from grading.samples import build_submission
from grading_course import nbgrader

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]


def test_zip_of_several_students(course):
    release = course.parent / "notebooks" / "oublier" / "oublier.ipynb"
    answers = {"ana": "complete_vacuum", "ben_2": "graine", "cyr": "ebauche"}
    archive = course / "downloaded" / "oublier" / "archive"
    archive.mkdir(parents=True)
    with zipfile.ZipFile(archive / "rendus-ent.zip", "w") as zf:
        for student, sample in answers.items():
            text = (course / "submissions" / f"{sample}.py").read_text(encoding="utf-8")
            nb = build_submission(release, text)
            zf.writestr(f"rendus/{student}/oublier.ipynb", nbformat.writes(nb))
    proc = nbgrader(course, "zip_collect", "oublier")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for student, sample in answers.items():
        path = course / "submitted" / student / "oublier" / "oublier.ipynb"
        cell = next(
            c
            for c in nbformat.read(path, as_version=4).cells
            if c.metadata.get("nbgrader", {}).get("grade_id") == "oublier"
        )
        text = (course / "submissions" / f"{sample}.py").read_text(encoding="utf-8")
        assert cell.source == text.rstrip("\n"), student

    before = (course / "submitted" / "ana" / "oublier" / "oublier.ipynb").read_bytes()
    with zipfile.ZipFile(archive / "rendus-ent.zip", "w") as zf:  # a new download, same student
        zf.writestr("rendus/ana/oublier.ipynb", nbformat.writes(nbformat.v4.new_notebook()))
    again = nbgrader(course, "zip_collect", "oublier")
    assert again.returncode != 0
    assert "use the --force option" in again.stdout + again.stderr
    assert (course / "submitted" / "ana" / "oublier" / "oublier.ipynb").read_bytes() == before
