"""The instructor tools find the course from the folder they run in, as nbgrader does, not from
where the `course` package is installed (on a hub: a non-editable copy in site-packages)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from nbgrader.api import Gradebook

from course.labo import TESTS
from course.labo.cours import course_dirs, find_grader_dir


@pytest.fixture(scope="module")
def installed_copy(repo_root, tmp_path_factory) -> Path:
    """A copy of the `course` package alone, as a non-editable install puts it."""
    site = tmp_path_factory.mktemp("site-packages")
    shutil.copytree(
        repo_root / "course", site / "course", ignore=shutil.ignore_patterns("__pycache__")
    )
    return site


@pytest.fixture(scope="module")
def course_template(repo_root, tmp_path_factory) -> Path:
    """A course folder somewhere else: its grader/ with the course's nbgrader configuration and
    a gradebook with two graded students."""
    grader = tmp_path_factory.mktemp("modele") / "mon-cours" / "grader"
    grader.mkdir(parents=True)
    shutil.copy(repo_root / "grader" / "nbgrader_config.py", grader)
    with Gradebook(f"sqlite:///{grader / 'gradebook.db'}") as gb:
        gb.add_assignment("oublier")
        gb.add_notebook("oublier", "oublier")
        for test in TESTS.values():
            gb.add_grade_cell(
                test.grade_id, "oublier", "oublier", max_score=test.points, cell_type="code"
            )
        for student in ("ana", "ben"):
            gb.add_student(student)
            gb.add_submission("oublier", student)
            for test in TESTS.values():
                grade = gb.find_grade(test.grade_id, "oublier", "oublier", student)
                grade.auto_score = 0 if student == "ben" else test.points
            gb.db.commit()
    return grader.parent


@pytest.fixture
def course_folder(course_template, tmp_path) -> Path:
    """A fresh copy of the course folder for one test."""
    return Path(shutil.copytree(course_template, tmp_path / "mon-cours"))


def _run(site: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(site))
    return subprocess.run(
        [sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )


def test_installed_package_is_the_copy(installed_copy, tmp_path):
    proc = _run(installed_copy, tmp_path, "-c", "import course.labo; print(course.labo.__file__)")
    assert proc.stdout.strip() == str(installed_copy / "course" / "labo" / "__init__.py")


@pytest.mark.parametrize("where", [".", "grader"])
def test_rapport_defaults_come_from_the_current_folder(installed_copy, course_folder, where):
    proc = _run(installed_copy, course_folder / where, "-m", "course.labo.rapport")
    assert proc.returncode == 0, proc.stderr
    out = course_folder / "grader" / "rapport"
    assert (out / "rapport.html").is_file() and (out / "notes.csv").is_file()
    assert "2 rendus" in proc.stdout and str(out) in proc.stdout
    assert "ana" in (out / "notes.csv").read_text()


def test_rapport_explicit_paths_still_win(installed_copy, course_folder, tmp_path):
    db = f"sqlite:///{course_folder / 'grader' / 'gradebook.db'}"
    proc = _run(
        installed_copy,
        tmp_path,
        "-m",
        "course.labo.rapport",
        "--db",
        db,
        "--out",
        str(tmp_path / "ailleurs"),
    )
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "ailleurs" / "rapport.html").is_file()
    assert not (course_folder / "grader" / "rapport").exists()


def test_outside_a_course_the_tools_say_so_in_french(installed_copy, tmp_path):
    empty = tmp_path / "vide"
    empty.mkdir()
    for module in ("course.labo.rapport", "course.labo.classe"):
        proc = _run(installed_copy, empty, "-m", module)
        assert proc.returncode == 2 and "Aucun nbgrader_config.py" in proc.stderr, proc.stderr


def test_classe_looks_for_submissions_in_the_course_it_runs_in(installed_copy, course_folder):
    proc = _run(installed_copy, course_folder, "-m", "course.labo.classe", "oublier")
    assert proc.returncode == 1
    assert f"Aucun rendu de « oublier » dans {course_folder / 'grader' / 'submitted'}" in (
        proc.stdout
    )
    other = course_folder.parent / "autre"
    shutil.copytree(course_folder, other)
    proc = _run(
        installed_copy,
        course_folder,
        "-m",
        "course.labo.classe",
        "oublier",
        "--grader-dir",
        str(other / "grader"),
    )
    assert f"dans {other / 'grader' / 'submitted'}" in proc.stdout


def test_course_dirs_read_nbgrader_s_configuration(course_folder):
    grader = find_grader_dir(course_folder)
    assert grader == (course_folder / "grader").resolve()
    assert find_grader_dir(grader) == grader
    dirs = course_dirs(grader)
    assert dirs.root == course_folder.resolve()
    assert dirs.submitted == course_folder.resolve() / "grader" / "submitted"
    assert dirs.db_url == f"sqlite:///{grader / 'gradebook.db'}"
