"""The installer refuses a Python that learners cannot run (one that lives under /root).

Measured on this machine: the repository's .venv python is a symlink into /root/.pyenv, and
/root is 0700, so a learner's server started from it dies with "Permission denied". The
installer checks the interpreter as user `nobody` before building anything.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import REPO

pytestmark = pytest.mark.hub

INSTALLER = REPO / "grader" / "hub" / "install-course-env.sh"
SYSTEM_PYTHON = Path("/usr/bin/python3")


@pytest.fixture
def open_tmp(hub_requirements) -> Iterator[Path]:
    """A temp folder every user may traverse (pytest's own tmp_path is private to root)."""
    path = Path(tempfile.mkdtemp(prefix="cours-hub-install-"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def _as_nobody(*command: str | Path) -> int:
    return subprocess.run(["runuser", "-u", "nobody", "--", *map(str, command)]).returncode


def _install(tmp_path: Path, python: Path) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "COURSE_HUB_PREFIX": str(tmp_path / "prefix"),
        "COURSE_HUB_EXCHANGE": str(tmp_path / "exchange"),
        "COURSE_HUB_PYTHON": str(python),
    }
    return subprocess.run(
        ["bash", str(INSTALLER)], env=env, capture_output=True, text=True, timeout=120
    )


def test_a_python_hidden_in_a_private_folder_is_refused(open_tmp: Path):
    if not SYSTEM_PYTHON.exists():
        pytest.skip("pas de /usr/bin/python3 sur cette machine")
    tmp_path = open_tmp
    private, public = tmp_path / "root-like", tmp_path / "public"
    private.mkdir(mode=0o700)
    public.mkdir(mode=0o755)
    (private / "python3").symlink_to(SYSTEM_PYTHON)  # how pyenv's venv python looks from /root
    (public / "python3").symlink_to(SYSTEM_PYTHON)
    # root runs both; a learner (nobody) runs only the one outside the private folder
    assert subprocess.run([private / "python3", "-c", "pass"]).returncode == 0
    assert _as_nobody(public / "python3", "-c", "pass") == 0
    assert _as_nobody(private / "python3", "-c", "pass") != 0
    result = _install(tmp_path, private / "python3")
    assert result.returncode != 0
    assert "n'est pas lisible par les autres utilisateurs" in result.stderr, result.stderr
    assert not (tmp_path / "prefix").exists()  # nothing built, nothing half-installed
    assert not (tmp_path / "exchange").exists()


def test_a_missing_python_gets_a_clear_error(open_tmp: Path):
    tmp_path = open_tmp
    result = _install(tmp_path, tmp_path / "pas-de-python")
    assert result.returncode != 0
    assert "Python introuvable" in result.stderr, result.stderr
    assert not (tmp_path / "prefix").exists()


def test_the_template_keeps_the_class_list_reader(open_tmp: Path):
    """The instructors' course template leaves the hub's recipes out but keeps
    grader/hub/roster.py: `make students`, collect and the erasure in an instructor's copy read
    the class list with it (grading.classroom.ids loads it from that path)."""
    env = {**os.environ, "COURSE_HUB_PREFIX": str(open_tmp / "prefix")}
    env["COURSE_HUB_INSTRUCTORS_GROUP"] = "users"
    built = subprocess.run(
        ["bash", str(INSTALLER), "--template-only"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert built.returncode == 0, built.stderr
    grader = open_tmp / "prefix" / "share" / "cours" / "grader"
    assert sorted(p.name for p in (grader / "hub").iterdir()) == ["roster.py"]
    env.pop("PYTHONPATH", None)  # the copy's own grading package, as its Makefile runs it
    loaded = subprocess.run(
        [
            sys.executable,
            "-c",
            "import grading.classroom.ids as i; print(i.ROSTER_FILE, i.id_problem('a+b'))",
        ],
        cwd=grader,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert loaded.returncode == 0, loaded.stderr
    assert loaded.stdout.startswith(f"{grader / 'hub' / 'roster.py'} identifiant invalide")
