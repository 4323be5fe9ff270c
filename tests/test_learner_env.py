"""The learner venvs the tests build in the machine's temporary folder: those of checkouts that
are gone are removed, the others (this checkout's, one being built, one of unknown origin) kept."""

from __future__ import annotations

import fcntl
from pathlib import Path

from learner_env import _remove_orphans


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
