"""Helpers of the class tools' tests (tests/grading): copies of the course's grading parts, and
nbgrader or a class tool run the way `make` runs them."""

from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import nbformat
from helpers import REPO

__all__ = [
    "BIN",
    "DUE",
    "VENV",
    "clone_head",
    "copy_course",
    "generated_course",
    "grading",
    "make",
    "nbgrader",
    "run_tool",
    "submit",
    "tool_env",
    "tree_digest",
]

BIN = Path(sys.executable).parent
VENV = BIN.parent  # the set-up the README's `make` creates (.venv), reused by the clones
# What a course copy needs to grade the TP: its sources, the configuration, the instructor-side
# package and templates, the sample answers.
COURSE_PARTS = (
    "solutions/oublier",
    "grader/nbgrader_config.py",
    "grader/grading",
    "grader/templates",
    "grader/submissions",
)
DUE = "2025-03-14 18:00:00"


def tool_env() -> dict[str, str]:
    """The environment `make` gives the class tools: the venv's bin/, grader/ importable."""
    env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    env["PYTHONPATH"] = str(REPO / "grader")
    return env


def run_tool(cwd: Path, *args: str, timeout: float = 900) -> subprocess.CompletedProcess:
    """A command run as `make` runs it (cwd, the venv's tools), output captured."""
    return subprocess.run(
        list(args),
        cwd=cwd,
        env=tool_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


def nbgrader(grader: Path, *args: str, timeout: float = 900) -> subprocess.CompletedProcess:
    """Stock nbgrader, started in the course's grader/ folder."""
    return run_tool(grader, str(BIN / "nbgrader"), *args, timeout=timeout)


def grading(grader: Path, module: str, *args: str) -> subprocess.CompletedProcess:
    """``python -m grading.<module>``, started in the course's grader/ folder."""
    return run_tool(grader, sys.executable, "-m", f"grading.{module}", *args)


def copy_course(dest: Path) -> Path:
    """A copy of the course's grading parts in `dest`; returns its grader/ folder."""
    for part in COURSE_PARTS:
        src, target = REPO / part, dest / part
        target.parent.mkdir(parents=True, exist_ok=True)
        if src.is_dir():
            shutil.copytree(src, target, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy(src, target)
    return dest / "grader"


_TEMPLATE: list[Path] = []  # this test process's generated course, made once


def generated_course(dest: Path) -> Path:
    """A course copy in `dest` with the TP generated into its own new gradebook, as
    ``nbgrader generate_assignment oublier`` leaves it; returns its grader/ folder.

    The first call runs the real command (about 10 s, 30 s under load: creating a gradebook
    starts nbgrader's ``alembic``); later calls copy that result, which is the same bytes.
    """
    if not _TEMPLATE:
        base = Path(tempfile.mkdtemp(prefix="cours-genere-"))
        atexit.register(shutil.rmtree, base, ignore_errors=True)
        grader = copy_course(base / "cours")
        proc = nbgrader(grader, "generate_assignment", "oublier", "--log-level=WARN")
        assert proc.returncode == 0, proc.stdout + proc.stderr
        _TEMPLATE.append(base / "cours")
    shutil.copytree(_TEMPLATE[0], dest, symlinks=True)
    return dest / "grader"


def submit(grader: Path, student: str, sample: str, timestamp: str | None = None) -> Path:
    """Put the sample answer `sample` where a local class puts submissions, as `student`."""
    from grading.samples import build_submission, written_answer

    text = (REPO / "grader" / "submissions" / f"{sample}.py").read_text(encoding="utf-8")
    release = grader.parent / "notebooks" / "oublier" / "oublier.ipynb"
    folder = grader / "submitted" / student / "oublier"
    folder.mkdir(parents=True, exist_ok=True)
    nb = build_submission(release, text, written_answer(REPO, sample))
    nbformat.write(nb, folder / "oublier.ipynb")
    if timestamp:
        (folder / "timestamp.txt").write_text(timestamp)
    return folder


def submit_carnet(grader: Path, student: str, carnet: str, canary: Path) -> Path:
    """Put the notebook-level attack `carnet` (grader/submissions/carnets) where a local class
    puts submissions, as `student`; its hostile cells would write `canary` if they ever ran."""
    from grading.samples import build_carnet

    release = grader.parent / "notebooks" / "oublier" / "oublier.ipynb"
    folder = grader / "submitted" / student / "oublier"
    folder.mkdir(parents=True, exist_ok=True)
    nbformat.write(build_carnet(release, REPO, carnet, canary), folder / "oublier.ipynb")
    return folder


def tree_digest(folder: Path) -> dict[str, bytes]:
    """Every file under `folder` with its bytes (to show nothing changed)."""
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


def clone_head(dest: Path) -> Path:
    """A fresh clone of this repository's HEAD in `dest` (committed files only)."""
    subprocess.run(["git", "clone", "--quiet", str(REPO), str(dest)], check=True, timeout=300)
    return dest


def make(
    clone: Path,
    *args: str,
    venv: Path = VENV,
    timeout: float = 1800,
    user: str | None = None,
    extra_env: dict[str, str] | None = None,
    folder: str = "",
) -> subprocess.CompletedProcess:
    """`make <args>` in `clone` (or its sub-folder `folder`, e.g. "grader") with an already
    set-up venv (the README's set-up is not what is tested here): its stamps are declared up to
    date, so nothing is installed."""
    stamps = [venv / ".stamp-runtime", venv / ".stamp-test"]
    cmd = ["make", "--no-print-directory", f"VENV={venv}"]
    cmd += [f"--old-file={stamp}" for stamp in stamps]
    if folder:  # grader/Makefile hands over to the root one, which make's -o does not reach
        cmd.append("OLD_FILES=" + " ".join(map(str, stamps)))
    cmd += list(args)
    if user:
        cmd = ["runuser", "-u", user, "--", *cmd]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHONPATH", "VIRTUAL_ENV"))}
    env.update(extra_env or {})
    return subprocess.run(
        cmd,
        cwd=clone / folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )
