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


def test_a_reenrolment_keeps_the_erasure_and_its_time(tmp_path):
    """DPO attack, point 4: a re-enrolment took the learner out of the register, so nothing
    could tell a backup from before the erasure held them. The register (real files, the
    class's two places) keeps the erasure, its date and adds the re-enrolment's time; erased
    again, the new erasure counts; a register merged (backup, restore) keeps the later times."""
    import shutil
    from datetime import UTC, datetime, timedelta

    from grading.privacy.erasure_register import (
        Register,
        erased_on,
        erasure_of,
        merge_register,
        reenrol,
        registers_of,
    )

    registers = registers_of(tmp_path / "grader", tmp_path / "sauvegardes")
    t0 = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
    record_erasure("ben", registers, when=t0)
    record_erasure("ana", registers, when=t0)
    assert erased_on("ben", registers) == "2026-12-01"
    assert erased_on("cyr", registers) is None  # control: never erased
    assert reenrol("ben", registers, when=t0 + timedelta(days=1))
    assert not reenrol("cyr", registers)
    for register in registers:
        assert len(register.entries()) == 2  # ben is still there, with his erasure
    ben = erasure_of("ben", registers)
    assert ben is not None and not ben.active and ben.day == "2026-12-01"
    assert ben.erased == t0 and ben.reenrolled == t0 + timedelta(days=1)
    assert erased_on("ben", registers) is None and erased_on("ana", registers) == "2026-12-01"
    # erased again: erased from that time, first date of the new erasure
    record_erasure("ben", registers, when=t0 + timedelta(days=2))
    again = erasure_of("ben", registers)
    assert again is not None and again.active and again.day == "2026-12-03"
    # a re-enrolment stamped later than the next erasure (another machine's clock ahead, a hand
    # edit): the erasure, recorded last, still wins
    assert reenrol("ana", registers, when=t0 + timedelta(days=5, minutes=5))
    record_erasure("ana", registers, when=t0 + timedelta(days=5))
    assert erased_on("ana", registers) == "2026-12-06"
    # a register of an older backup (ben erased, never re-enrolled) merged in: the later times win
    old = Register(tmp_path / "archive")
    old.folder.mkdir()
    shutil.copy(tmp_path / "grader" / KEY_NAME, old.folder)  # one key per class
    record_erasure("ben", [old], when=t0)
    merge_register(Register(tmp_path / "grader"), old)
    merged = erasure_of("ben", [old])
    assert merged is not None and merged.erased == t0 + timedelta(days=2)
    assert merged.active and merged.reenrolled is None  # the re-enrolment before it is over


def test_a_register_line_with_any_fingerprint_is_read_never_a_traceback(tmp_path):
    """A register edited by hand or restored damaged: a line whose fingerprint is not ASCII,
    made the constant-time comparison raise TypeError in every command that checks erasures
    (collect, roster, erasure); one that is not text, the same or a traceback in a merge. Such
    a line names nobody; the others still count."""
    import json

    from grading.privacy.erasure_register import (
        erased_on,
        merge_register,
        reenrol,
        registers_of,
    )

    registers = registers_of(tmp_path / "grader", tmp_path / "sauvegardes")
    record_erasure("ben", registers)
    for register in registers:
        data = json.loads((register.folder / REGISTER_NAME).read_text(encoding="utf-8"))
        data["effaces"] += [{"empreinte": "élève"}, {"empreinte": 7}, {"empreinte": ["x"]}]
        (register.folder / REGISTER_NAME).write_text(json.dumps(data), encoding="utf-8")
    assert erased_on("ben", registers) is not None and erased_on("ana", registers) is None
    record_erasure("ana", registers)
    assert erased_on("ana", registers) is not None
    assert reenrol("ana", registers) and erased_on("ana", registers) is None
    merge_register(registers[0], registers[1])
    for register in registers:
        assert {"empreinte": "élève"} in register.entries()
