"""Fixtures for the grader's tests: the repository root, the sample answers and their scores."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import REPO as ROOT

BIN = Path(sys.executable).parent


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return ROOT


@pytest.fixture(scope="session")
def sample_answers() -> dict[str, str]:
    folder = ROOT / "grader" / "submissions"
    return {p.stem: p.read_text(encoding="utf-8") for p in sorted(folder.glob("*.py"))}


@pytest.fixture(scope="session")
def expected_scores() -> dict[str, dict]:
    return json.loads((ROOT / "grader" / "submissions" / "attendus.json").read_text("utf-8"))


def _run_nbgrader(
    grader_dir: Path, *args: str, timeout: float = 900
) -> subprocess.CompletedProcess:
    env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    env["PYTHONPATH"] = str(ROOT / "grader")  # the instructor package, as `make grade` has it
    return subprocess.run(
        [str(BIN / "nbgrader"), *args],
        cwd=grader_dir,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.fixture(scope="session")
def run_nbgrader():
    """Runs a stock nbgrader command where instructors run it: in the course's grader/ folder."""
    return _run_nbgrader


@pytest.fixture(autouse=True, scope="session")
def venv_tools_on_path():
    """nbgrader's gradebook runs the `alembic` command: the venv's bin/ must be on PATH."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PATH", f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
        yield
