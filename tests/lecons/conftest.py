"""Lesson test fixtures: a network-free kernel of the learner's environment, executed lessons.

Every lesson runs in a kernel of the venv `make setup` makes (tests/learner_env.py: what
`make lab` installs, nothing from the test set), so a package only a test tool brings cannot
make a lesson pass here and fail for a learner.
"""

from __future__ import annotations

import json
import shutil
import sys
import time
from pathlib import Path

import helpers
import nbformat
import pytest
import run_cache
from helpers import REPO
from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import KernelManager
from learner_env import KERNEL_NAME, kernels_for, learner_env
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

SOLUTIONS = REPO / "solutions" / "lecons"
STUDENT = REPO / "notebooks" / "lecons"
# this folder's helper modules (parcours.py) import as tests/grading's do
sys.path.insert(0, str(Path(__file__).parent))


def execute_notebook(
    path: Path,
    workdir: Path,
    *,
    allow_errors: bool = False,
    timeout: int = 60,
    python: Path | None = None,
) -> tuple[nbformat.NotebookNode, float]:
    """Run a notebook top to bottom in a fresh network-free kernel whose cwd is ``workdir``: of
    the learner's environment (`make lab`'s venv), or of ``python``'s (the hub's)."""
    nb = nbformat.read(path, as_version=4)
    folder = learner_env().kernels if python is None else kernels_for(python)
    kernels = KernelSpecManager(kernel_dirs=[str(folder)], ensure_native_kernel=False)
    client = NotebookClient(
        nb,
        km=KernelManager(kernel_name=KERNEL_NAME, kernel_spec_manager=kernels),
        timeout=timeout,
        kernel_name=KERNEL_NAME,
        allow_errors=allow_errors,
        resources={"metadata": {"path": workdir}},
    )
    start = time.perf_counter()
    try:
        # the kernel manager is ours: nbclient stops the kernel only when told
        client.execute(env=helpers.network_free_env(), cwd=str(workdir), cleanup_kc=True)
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


def _repo_lesson_files() -> set[Path]:
    return {p for tree in (SOLUTIONS, STUDENT) for p in tree.rglob("*") if p.is_file()}


def _execute_lessons(folder: Path) -> None:
    """Every solution lesson run in ``folder/<stem>/``, its work folder; the executed notebook
    beside it (``<stem>.ipynb``) and every run's duration in ``seconds.json``."""
    before = _repo_lesson_files()
    seconds = {}
    for path in sorted(SOLUTIONS.glob("*.ipynb")):
        workdir = folder / path.stem
        workdir.mkdir()
        nb, seconds[path.name] = execute_notebook(path, workdir)
        text = nbformat.writes(nb)
        # run_cache renames the build: an output naming its folder would name nothing
        assert str(folder) not in text, f"{path.name} shows its work folder's path"
        (folder / f"{path.stem}.ipynb").write_text(text, encoding="utf-8")
    (folder / "seconds.json").write_text(json.dumps(seconds), encoding="utf-8")
    created = _repo_lesson_files() - before
    assert not created, f"running the lessons wrote into the repository: {sorted(created)}"


@pytest.fixture(scope="session")
def executed_lessons(tmp_path_factory) -> dict[str, tuple[nbformat.NotebookNode, float, Path]]:
    """Every solution lesson executed once per run, whichever xdist workers ask (run_cache):
    name -> (executed notebook, seconds, a copy of its work folder with what it left there)."""
    key = run_cache.content_digest(
        REPO,
        ("solutions/lecons", "course", "tests/lecons/sans_reseau", "requirements/lab.txt"),
        Path(__file__).read_text(encoding="utf-8"),
        Path(helpers.__file__).read_text(encoding="utf-8"),
    )
    built = run_cache.built_once("lecons-executees", key, _execute_lessons)
    copy = tmp_path_factory.mktemp("lecons-executees")
    shutil.copytree(built, copy, dirs_exist_ok=True)
    seconds = json.loads((copy / "seconds.json").read_text(encoding="utf-8"))
    return {
        name: (
            nbformat.read(copy / f"{Path(name).stem}.ipynb", as_version=4),
            s,
            copy / Path(name).stem,
        )
        for name, s in seconds.items()
    }
