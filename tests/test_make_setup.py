"""`make setup`, the learner's install, as README.md documents it without uv: INSTALLER=pip (also
the set-up's own fallback when uv cannot be had), a real install from the Makefile, apart from
tests/learner_env.py's (uv, shared by the lesson tests). A work unit of its own: about two
minutes of pip, beside the others (tests/work_units.py)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import REPO


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_make_setup_with_pip_gives_a_venv_the_lessons_run_in(tmp_path: Path) -> None:
    """`make setup INSTALLER=pip` (the README's way without uv, and the set-up's own fallback
    when uv cannot be had) installs the lab's lock with pip alone, into a venv whose path holds
    an apostrophe and an accent (every path the Makefile hands to the shell is quoted). pip
    resolves nothing: in hash mode it refused the lock, which leaves rfc3987-syntax out."""
    venv = tmp_path / "l'élève" / "venv"
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "UV")}
    # pip's bytecode compilation left out here (a learner's pip does it): 91 s instead of 124 s
    env["PIP_NO_COMPILE"] = "1"
    # the interpreter the test set-up was made from (a venv's python would nest venvs)
    python = getattr(sys, "_base_executable", sys.executable)
    done = subprocess.run(
        ["make", "--no-print-directory", "-C", str(REPO), "setup", "INSTALLER=pip"]
        + [f"VENV={venv}", f"PYTHON={python}"],
        env=env,
        capture_output=True,
        text=True,
        timeout=840,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "pip install --no-deps --require-hashes -r requirements/lab.txt" in done.stdout
    assert "uv pip install" not in done.stdout and not (venv / "bin" / "uv").exists()
    # what a lesson's first cell imports, the course from this checkout, and (--no-deps) not
    # the package the lock leaves out
    lesson = (
        "from course.sessions import SqliteSessionService; from course.tuteur import demo; "
        "import course, jupyterlab, nbgrader, ipykernel, importlib.util; "
        "assert importlib.util.find_spec('rfc3987_syntax') is None; print(course.__file__)"
    )
    check = subprocess.run(
        [str(venv / "bin" / "python"), "-c", lesson],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert check.returncode == 0, check.stderr
    assert check.stdout.strip() == str(REPO / "course" / "__init__.py")
