"""The learner venvs the tests build in the machine's temporary folder: those of checkouts that
are gone are removed, the others (this checkout's, one being built, one of unknown origin) kept;
and the Python they are made from."""

from __future__ import annotations

import fcntl
from pathlib import Path

import pytest
from learner_env import _remove_orphans, learner_python


def _venv(parent: Path, name: str, checkout: Path | None) -> Path:
    folder = parent / f"cours-lab-env-{name}"
    (folder / "venv").mkdir(parents=True)
    if checkout is not None:
        (folder / "checkout").write_text(str(checkout), encoding="utf-8")
    return folder


def test_the_venvs_of_checkouts_that_are_gone_are_removed(tmp_path: Path) -> None:
    here = tmp_path / "clone-present"
    here.mkdir()
    gone = _venv(tmp_path, "gone", tmp_path / "clone-removed")
    kept = _venv(tmp_path, "kept", here)
    unknown = _venv(tmp_path, "unknown", None)
    building = _venv(tmp_path, "building", tmp_path / "clone-also-removed")
    other = tmp_path / "other-folder"
    other.mkdir()
    with open(building / ".verrou", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        _remove_orphans(tmp_path)
    assert not gone.exists()
    assert kept.is_dir() and unknown.is_dir() and building.is_dir() and other.is_dir()


def _python(folder: Path, version: str, answer: str) -> Path:
    python = folder / "versions" / f"{version}.1" / "bin" / f"python{version}"
    python.parent.mkdir(parents=True)
    python.write_text(f"#!/bin/sh\n{answer}\n", encoding="utf-8")
    python.chmod(0o755)
    return python


def test_the_lessons_run_on_the_newest_python_that_answers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A pyenv shim of a version that is not selected answers with an error: the next one."""
    monkeypatch.delenv("COURSE_LEARNER_PYTHON", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path / "rien"))
    monkeypatch.setenv("PYENV_ROOT", str(tmp_path))
    _python(tmp_path, "3.14", "echo 'pyenv: python3.14: command not found' >&2; exit 127")
    newest = _python(tmp_path, "3.13", "echo 3.13")
    _python(tmp_path, "3.12", "echo 3.12")
    learner_python.cache_clear()
    try:
        assert learner_python() == newest
        monkeypatch.setenv("COURSE_LEARNER_PYTHON", "/opt/autre/python3.11")
        learner_python.cache_clear()
        assert learner_python() == Path("/opt/autre/python3.11")
    finally:
        learner_python.cache_clear()
