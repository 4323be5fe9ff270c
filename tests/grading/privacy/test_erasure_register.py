"""The register of erased learners (grading.privacy.erasure_register): where it is written in
this repository is git-ignored (its key would let anyone check a list of names against it)."""

from __future__ import annotations

import subprocess

from grading.classroom.paths import course_dirs
from grading.privacy.erasure_register import (
    KEY_NAME,
    REGISTER_NAME,
    class_registers,
    record_erasure,
)
from helpers import REPO


def _ignored(path) -> bool:
    check = subprocess.run(["git", "check-ignore", "-q", str(path)], cwd=REPO)
    assert check.returncode in (0, 1), check
    return check.returncode == 0


def test_the_register_and_its_key_in_the_repository_are_git_ignored(tmp_path):
    """DPO attack, point 10: ``grader/effacements.json`` and ``grader/.cle-effacements`` showed
    in ``git status``. The places are the ones the code writes to for this repository's course
    (beside its gradebook, beside its backups), with the names a real erasure writes (here in
    a scratch folder: never in the repository)."""
    dirs = course_dirs(REPO / "grader")
    registers = class_registers(dirs.db_url, dirs.grader_dir)
    assert [r.folder for r in registers] == [REPO / "grader", REPO / "grader" / "sauvegardes"]
    scratch = class_registers(f"sqlite:///{tmp_path / 'gradebook.db'}", tmp_path)
    record_erasure("ben", scratch)
    written = sorted(p.name for p in tmp_path.iterdir() if p.is_file())
    assert written == sorted([KEY_NAME, REGISTER_NAME]), written
    for register in registers:
        for name in (*written, f".{REGISTER_NAME}.tmp", f".{KEY_NAME}.tmp"):
            assert _ignored(register.folder / name), register.folder / name
    # positive control: the same names anywhere else in the repository are not ignored
    assert not _ignored(REPO / "course" / REGISTER_NAME)
    assert not _ignored(REPO / "grader" / "grading" / KEY_NAME)
