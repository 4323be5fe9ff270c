"""Lesson test fixtures: a network-free kernel, executed lessons."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import helpers
import nbformat
import pytest
from helpers import REPO
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

SOLUTIONS = REPO / "solutions" / "lecons"
STUDENT = REPO / "notebooks" / "lecons"
# this folder's helper modules (parcours.py) import as tests/grading's do
sys.path.insert(0, str(Path(__file__).parent))


def execute_notebook(
    path: Path, workdir: Path, *, allow_errors: bool = False, timeout: int = 60
) -> tuple[nbformat.NotebookNode, float]:
    """Run a notebook top to bottom in a fresh network-free kernel whose cwd is ``workdir``."""
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(
        nb,
        timeout=timeout,
        kernel_name="python3",
        allow_errors=allow_errors,
        resources={"metadata": {"path": workdir}},
    )
    start = time.perf_counter()
    try:
        client.execute(env=helpers.network_free_env(), cwd=str(workdir))
    except CellExecutionError as exc:
        raise AssertionError(f"{path.name} : {exc}") from None
    return nb, time.perf_counter() - start


@pytest.fixture
def network_free_env() -> dict[str, str]:
    """Environment whose Python processes cannot open a network connection."""
    return helpers.network_free_env()


@pytest.fixture
def run_notebook():
    """``run_notebook(path, workdir, allow_errors=False)`` -> (executed notebook, seconds)."""
    return execute_notebook


@pytest.fixture(scope="session")
def executed_lessons(tmp_path_factory) -> dict[str, tuple[nbformat.NotebookNode, float, Path]]:
    """Every solution lesson executed once (shared by the tests that read their outputs)."""

    def repo_files() -> set[Path]:
        return {p for tree in (SOLUTIONS, STUDENT) for p in tree.rglob("*") if p.is_file()}

    before = repo_files()
    results = {}
    for path in sorted(SOLUTIONS.glob("*.ipynb")):
        workdir = tmp_path_factory.mktemp(path.stem)
        nb, seconds = execute_notebook(path, workdir)
        results[path.name] = (nb, seconds, workdir)
    created = repo_files() - before
    assert not created, f"running the lessons wrote into the repository: {sorted(created)}"
    return results
