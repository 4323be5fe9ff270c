"""The class tools find the course from the folder they run in, as nbgrader does, never from
where their own files are: the package used here is the repository's grader/grading, the course
is a copy elsewhere (a hub instructor's copy, the demo course)."""

from __future__ import annotations

import json
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest
from grading.demo import demo_config
from grading.paths import course_dirs, find_grader_dir
from grading_course import copy_course, run_tool
from nbgrader.api import Gradebook

PY = sys.executable


@pytest.fixture(scope="module")
def course_template(tmp_path_factory) -> Path:
    """A course copy elsewhere with a gradebook holding two graded students."""
    grader = copy_course(tmp_path_factory.mktemp("modele") / "mon-cours")
    nb = nbformat.read(grader.parent / "solutions" / "oublier" / "oublier.ipynb", as_version=4)
    cells = {
        c.metadata.nbgrader["grade_id"]: c.metadata.nbgrader["points"]
        for c in nb.cells
        if c.metadata.get("nbgrader", {}).get("grade") and not c.metadata.nbgrader.get("solution")
    }
    with Gradebook(f"sqlite:///{grader / 'gradebook.db'}") as gb:
        gb.add_assignment("oublier")
        gb.add_notebook("oublier", "oublier")
        for grade_id, points in cells.items():
            gb.add_grade_cell(grade_id, "oublier", "oublier", max_score=points, cell_type="code")
        for student in ("ana", "ben"):
            gb.add_student(student)
            gb.add_submission("oublier", student)
            for grade_id, points in cells.items():
                grade = gb.find_grade(grade_id, "oublier", "oublier", student)
                grade.auto_score = 0 if student == "ben" else points
            gb.db.commit()
    return grader.parent


@pytest.fixture
def course_folder(course_template, tmp_path) -> Path:
    """A fresh copy of the course folder for one test, without its own grading package."""
    folder = Path(shutil.copytree(course_template, tmp_path / "mon-cours"))
    shutil.rmtree(folder / "grader" / "grading")  # the tools used are the repository's
    return folder


def _run(cwd: Path, *args: str):
    return run_tool(cwd, PY, *args, timeout=300)


# Several `python -m grading.<tool> ARGS` in one Python started in `cwd`: each runs as `-m` runs
# it (runpy, as __main__, with its own argv), its exit status and output kept apart. The tools
# import nbgrader (about 4 s of CPU a start): one start for the batch.
_BATCH = """
import contextlib, io, json, runpy, sys
results = []
for module, *args in json.loads(sys.argv[1]):
    out, err = io.StringIO(), io.StringIO()
    sys.argv = [module, *args]
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            runpy.run_module(module, run_name="__main__", alter_sys=True)
            code = 0
        except SystemExit as exc:
            code = exc.code
            if isinstance(code, str):
                print(code, file=sys.stderr)
            code = 1 if isinstance(code, str) else (code or 0)
    results.append([code, out.getvalue(), err.getvalue()])
print(json.dumps(results))
"""


@dataclass
class ToolRun:
    """One tool's run in a batch: what a subprocess.CompletedProcess says of it."""

    returncode: int
    stdout: str
    stderr: str


def _run_batch(cwd: Path, *commands: tuple[str, ...]) -> list[ToolRun]:
    proc = run_tool(cwd, PY, "-c", _BATCH, json.dumps(commands), timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return [ToolRun(*result) for result in json.loads(proc.stdout.splitlines()[-1])]


@pytest.mark.parametrize("where", [".", "grader"])
def test_report_defaults_come_from_the_current_folder(course_folder, where):
    proc = _run(course_folder / where, "-m", "grading.report")
    assert proc.returncode == 0, proc.stderr
    out = course_folder / "grader" / "rapport"
    assert (out / "rapport.html").is_file() and (out / "notes.csv").is_file()
    assert "2 élève(s), 2 rendu(s)" in proc.stdout and str(out) in proc.stdout
    assert "ana" in (out / "notes.csv").read_text()


def test_report_explicit_paths_still_win(course_folder, tmp_path):
    db = f"sqlite:///{course_folder / 'grader' / 'gradebook.db'}"
    proc = _run(tmp_path, "-m", "grading.report", "--db", db, "--out", str(tmp_path / "ailleurs"))
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "ailleurs" / "rapport.html").is_file()
    assert not (course_folder / "grader" / "rapport").exists()


def test_outside_a_course_the_tools_say_so_in_french(tmp_path):
    empty = tmp_path / "vide"
    empty.mkdir()
    modules = ("grading.report", "grading.autograde", "grading.feedback", "grading.demo")
    for module, proc in zip(modules, _run_batch(empty, *[(m,) for m in modules]), strict=True):
        assert proc.returncode == 2 and "Aucun nbgrader_config.py" in proc.stderr, (module, proc)


def test_autograde_looks_for_submissions_in_the_course_it_runs_in(course_folder):
    other = course_folder.parent / "autre"
    shutil.copytree(course_folder, other)
    here, there = _run_batch(
        course_folder,
        ("grading.autograde", "oublier"),
        ("grading.autograde", "oublier", "--grader-dir", str(other / "grader")),
    )
    assert here.returncode == 2, here
    submitted = course_folder / "grader" / "submitted"
    assert f"Aucun rendu de « oublier » dans {submitted}" in here.stderr, here
    assert there.returncode == 2, there
    assert f"dans {other / 'grader' / 'submitted'}" in there.stderr, there


def test_course_dirs_read_nbgrader_s_configuration(course_folder):
    grader = find_grader_dir(course_folder)
    assert grader == (course_folder / "grader").resolve()
    assert find_grader_dir(grader) == grader
    dirs = course_dirs(grader)
    root = course_folder.resolve()
    assert dirs.root == root and dirs.source == root / "solutions"
    assert dirs.submitted == root / "grader" / "submitted"
    assert dirs.autograded == root / "grader" / "autograded"
    assert dirs.feedback == root / "grader" / "feedback"
    assert dirs.release == root / "notebooks"
    assert dirs.db_url == f"sqlite:///{grader / 'gradebook.db'}"


def test_the_demo_course_has_its_own_folders_and_the_course_s_settings(course_folder):
    grader = (course_folder / "grader").resolve()
    demo = grader / "demo"
    demo.mkdir()
    (demo / "nbgrader_config.py").write_text(demo_config(grader / "nbgrader_config.py", demo))
    dirs = course_dirs(demo)
    assert dirs.root == course_folder.resolve() and dirs.source == dirs.root / "solutions"
    for folder in (dirs.submitted, dirs.autograded, dirs.feedback, dirs.release):
        assert folder.parent == demo
    assert dirs.db_url == f"sqlite:///{demo / 'gradebook.db'}"
