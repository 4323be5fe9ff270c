"""Backup and restore (issue 22, point 9), with real nbgrader commands and files: a backup of a
graded class restored into a fresh clone (``make restauration``) gives the same ``nbgrader
export``, byte for byte, and the same files; backups taken while ``make grade`` runs restore to
gradebooks that open and hold whole submissions, and the next grading completes them; a
restore never writes over a class, nor from a damaged archive; retention purges only old
backups."""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tarfile
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from graded_class import class_in
from grading.backup import BackupError, backup, restore
from grading.classroom.paths import course_dirs, load_config
from grading.privacy.backup_files import backups_in
from grading_course import (
    clone_head,
    copy_course,
    damage_inside,
    grading,
    long_path,
    make,
    nbgrader,
    read_below,
    register,
    run_tool,
    submit,
    tool_env,
    tree_digest,
)
from nbgrader.api import Gradebook
from traitlets.utils.importstring import import_item

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1200)]

PARTS = ("submitted", "autograded", "feedback")


def _export(grader, name: str = "export.csv") -> bytes:
    """Stock ``nbgrader export`` (what ``make export`` runs) in the course's grader/ folder."""
    proc = nbgrader(grader, "export", f"--to={name}")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return (grader / name).read_bytes()


def _export_here(grader) -> bytes:
    """What ``nbgrader export`` writes (``ExportApp.start``: the configured plugin on the
    course's gradebook, opened by nbgrader's ``Gradebook``, the course's late rule applied
    again as it does), made in this process: the same bytes without starting nbgrader (about
    4 s of CPU each); nothing written in the course but what the export itself writes."""
    config = load_config(grader)
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "export.csv"
        plugin = import_item(config.ExportApp.plugin_class)(to=str(out), config=config)
        with Gradebook(course_dirs(grader).db_url, config.CourseDirectory.course_id) as gb:
            plugin.export(gb)
        return out.read_bytes()


def test_a_backup_restores_into_a_fresh_clone(graded_class_copy, tmp_path):
    grader = graded_class_copy.grader  # its own: SQLite opens the gradebook to back it up
    roster = grader / "eleves.csv"
    (tmp_path / "sauv").mkdir()  # a folder given is made by the teacher (a key: mounted)
    save = grading(
        grader,
        "backup",
        "sauvegarder",
        "--dossier",
        str(tmp_path / "sauv"),
        "--eleves",
        str(roster),
    )
    assert save.returncode == 0, save.stdout + save.stderr
    assert "Sauvegarde écrite" in save.stdout and "carnet de notes" in save.stdout
    [(_, archive)] = backups_in(tmp_path / "sauv")
    # a register is always beside the backups (empty: nobody erased), so a restore checks one
    assert json.loads((tmp_path / "sauv" / "effacements.json").read_bytes())["effaces"] == []

    # the archive copied alone: no erasure register anywhere, refused until confirmed (DPO,
    # point 5), through make (CONFIRMER=1)
    usb = tmp_path / "cle-usb"
    usb.mkdir()
    alone = Path(shutil.copy(archive, usb))
    bare = clone_head(tmp_path / "clone-sans-registre")
    refused = make(bare, "restauration", f"SAUVEGARDE={alone}")
    assert refused.returncode != 0, refused.stdout + refused.stderr
    assert "✘ Restauration refusée, rien n'a été écrit\u00a0: aucun registre des effacements" in (
        refused.stderr
    )
    assert "un élève effacé à sa demande (RGPD) après cette sauvegarde reviendrait" in (
        refused.stderr
    )
    assert not (bare / "grader" / "gradebook.db").exists()
    assert not (bare / "grader" / "submitted").exists()
    confirmed = make(bare, "restauration", f"SAUVEGARDE={alone}", "CONFIRMER=1")
    assert confirmed.returncode == 0, confirmed.stdout + confirmed.stderr
    assert "⚠ Restauré sans vérifier les effacements, à votre demande (CONFIRMER=1)" in (
        confirmed.stderr
    )
    assert (bare / "grader" / "gradebook.db").is_file()

    clone = clone_head(tmp_path / "clone")
    restored = make(clone, "restauration", f"SAUVEGARDE={archive}")
    assert restored.returncode == 0, restored.stdout + restored.stderr
    assert "Restauré depuis" in restored.stdout
    assert "⚠" not in restored.stderr, restored.stderr  # the register beside it was checked
    assert _export(clone / "grader") == _export_here(grader)
    for part in PARTS:
        assert tree_digest(clone / "grader" / part) == tree_digest(grader / part), part
    assert (clone / "grader" / "eleves.csv").read_bytes() == roster.read_bytes()

    # a second restore would overwrite the class: refused, nothing written
    gradebook = (clone / "grader" / "gradebook.db").read_bytes()
    again = make(clone, "restauration", f"SAUVEGARDE={archive}")
    assert again.returncode != 0
    assert "Restauration refusée, rien n'a été écrit" in again.stderr
    assert (clone / "grader" / "gradebook.db").read_bytes() == gradebook

    # a damaged archive (one byte of a submission changed) is refused before anything is written
    damaged = tmp_path / "sauvegarde-20250101-000000.tar.gz"
    with tarfile.open(archive) as src, tarfile.open(damaged, "w:gz") as dst:
        for info in src:
            data = src.extractfile(info).read()
            if info.name == "submitted/ana/oublier/oublier.ipynb":
                data = data.replace(b"oublier", b"0ublier", 1)
            dst.addfile(info, io.BytesIO(data))
    fresh = copy_course(tmp_path / "neuf")
    proc = grading(fresh, "backup", "restaurer", str(damaged))
    assert proc.returncode == 2
    assert "«\u00a0submitted/ana/oublier/oublier.ipynb\u00a0» abîmé" in proc.stderr
    assert not (fresh / "gradebook.db").exists() and not (fresh / "submitted").exists()


def test_backups_taken_while_grading_are_consistent(course, tmp_path):
    grader = course
    register(grader, "ana", "ben", "cyr")
    for student, sample in (("ana", "complete_vacuum"), ("ben", "graine"), ("cyr", "ebauche")):
        submit(grader, student, sample, "2025-03-14 17:00:00")
    grade = subprocess.Popen(
        [sys.executable, "-m", "grading.autograde", "oublier"],
        cwd=grader,
        env=tool_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    archives, during = [], 0
    try:
        while grade.poll() is None:
            path, _, _ = backup(tmp_path / "sauv", grader_dir=grader)
            archives.append(path)
            during += grade.poll() is None
            time.sleep(0.5)
    finally:
        out = grade.communicate()[0]
    assert grade.returncode == 0, out
    assert during >= 2, (during, out)
    final = _export_here(grader)
    # what a finished grading gives one student
    with sqlite3.connect(grader / "gradebook.db") as con:
        [(full,)] = con.execute(
            "SELECT count(g.id) FROM submitted_assignment sa "
            "JOIN submitted_notebook sn ON sn.assignment_id = sa.id "
            "JOIN grade g ON g.notebook_id = sn.id WHERE sa.student_id = 'ana'"
        ).fetchall()
    con.close()
    assert full >= 10, full
    by_count: dict[int, object] = {}
    partial = []
    for archive in archives:
        with tarfile.open(archive) as tar:
            data = tar.extractfile("gradebook.db").read()
            copies = {
                n.split("/")[1]
                for n in tar.getnames()
                if n.startswith("autograded/") and n.endswith("/oublier/oublier.ipynb")
            }
            graded = ("autograded/", "feedback/")
            others = {n.split("/")[1] for n in tar.getnames() if n.startswith(graded)}
            left_out = json.loads(tar.extractfile("manifest.json").read())["left_out"]
        db = tmp_path / "snapshot.db"
        db.write_bytes(data)
        with sqlite3.connect(db) as con:
            assert con.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
            assert con.execute("PRAGMA foreign_key_check").fetchall() == []
            grades = dict(
                con.execute(
                    "SELECT sa.student_id, count(g.id) FROM submitted_assignment sa "
                    "JOIN submitted_notebook sn ON sn.assignment_id = sa.id "
                    "LEFT JOIN grade g ON g.notebook_id = sn.id GROUP BY sa.student_id"
                ).fetchall()
            )
        con.close()
        # the gradebook is taken first; a graded copy is kept only when all its grades are in it:
        # a student with a graded file (copy, other file, feedback) in the backup has all its grades
        assert others == copies, (others, copies)
        assert all(grades.get(s) == full for s in copies), (copies, grades, full)
        assert all(p.split("/")[1] not in copies for p in left_out), (left_out, copies)
        assert all(n <= full for n in grades.values()), (grades, full)
        if any(n < full for n in grades.values()):
            partial.append(archive)
        by_count.setdefault(len(grades), archive)
    assert len(by_count) >= 2, by_count  # snapshots of different moments
    # one snapshot per moment restores into a course where nbgrader opens it; one taken mid-grading
    # (a student half graded, if one was caught) is completed by the next grading: same export
    for k, archive in enumerate(by_count.values()):
        target = copy_course(tmp_path / f"r{k}")
        restore(archive, grader_dir=target)
        _export_here(target)
    middle = partial or [by_count[n] for n in sorted(by_count) if 0 < n < 3]
    middle = middle or [by_count[min(by_count)]]
    target = copy_course(tmp_path / "suite")
    restore(middle[0], grader_dir=target)
    again = grading(target, "autograde", "oublier")
    assert again.returncode == 0, again.stdout + again.stderr
    assert _export_here(target) == final


def test_retention_keeps_recent_backups_only(course, tmp_path):
    folder = tmp_path / "sauv"
    path, _, _ = backup(folder, grader_dir=course)
    now = datetime.now(UTC)
    for days in (2, 10, 30):
        old = now - timedelta(days=days)
        shutil.copy(path, folder / f"sauvegarde-{old:%Y%m%d-%H%M%S}.tar.gz")
    (folder / "notes-a-garder.tar.gz").write_bytes(b"pas une sauvegarde")
    proc = grading(course, "backup", "purger", "--dossier", str(folder), "--garder-jours", "7")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "2 sauvegarde(s) effacée(s), 2 gardée(s)" in proc.stdout
    assert [p for _, p in backups_in(folder)][0] == path
    proc = grading(course, "backup", "purger", "--dossier", str(folder), "--garder", "1")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert [p for _, p in backups_in(folder)] == [path]
    assert (folder / "notes-a-garder.tar.gz").exists()


def test_hostile_names_and_paths_longer_than_the_new_class_takes_restore_whole(course, tmp_path):
    """Teacher's attack, stop 58: a 245-byte file name was saved and never restored (its
    temporary « .<name>.restauration » past 255 bytes): the restore stopped before the gradebook,
    the class locked, an erased learner back; a file « .notes.txt.restauration » was overwritten
    by notes.txt's temporary copy; a path that fit below the saved class did not below a clone
    whose own path is longer. Each is restored, byte for byte."""
    folder = submit(course, "ben", "complete_vacuum")
    (folder / ("n" * 245)).write_bytes(b"nom long")
    (folder / "notes.txt").write_bytes(b"A")
    (folder / ".notes.txt.restauration").write_bytes(b"B")
    (folder / ".restauration-0badc0de").write_bytes(b"le sien")  # a temporary name, hers
    levels = (4000 - len(str(folder))) // 251  # about 4,000 characters here
    deep = long_path(folder, levels, b"au fond")
    saved = grading(course, "backup", "sauvegarder", "--confirmer", "--dossier", str(tmp_path))
    assert saved.returncode == 0 and "Non sauvegardé" not in saved.stderr, saved.stderr
    ((_, archive),) = backups_in(tmp_path)
    fresh = copy_course(tmp_path / ("r" * 200) / ("s" * 200) / "neuf")  # 400 characters more
    restored = grading(fresh, "backup", "restaurer", str(archive), "--confirmer")
    assert restored.returncode == 0, restored.stdout + restored.stderr
    again = fresh / "submitted" / "ben" / "oublier"
    assert len(str(again)) + sum(len(n) + 1 for n in deep) > os.pathconf("/", "PC_PATH_MAX")
    assert read_below(again, deep) == b"au fond"
    assert (again / ("n" * 245)).read_bytes() == b"nom long"
    assert (again / "notes.txt").read_bytes() == b"A"
    assert (again / ".notes.txt.restauration").read_bytes() == b"B"
    assert (again / ".restauration-0badc0de").read_bytes() == b"le sien"
    assert not (fresh / ".restauration-en-cours").exists()


def test_an_unreadable_file_is_named_and_the_class_saved(course, tmp_path, monkeypatch):
    """Teacher's attack, stop 58: a student's file of mode 000 (kept by unzip or cp -a) stopped
    every backup of the class, a crontab's every night. Named « illisible », exit 1; the rest is
    saved. A notebook long invalid is read once (twenty tries cost 2 s each)."""
    folder = submit(course, "ben", "complete_vacuum")
    (folder / "illisible.txt").write_bytes(b"s")
    (folder / "illisible.txt").chmod(0)
    (folder / "brouillon.ipynb").write_bytes(b"{")
    old = time.time() - 60
    os.utime(folder / "brouillon.ipynb", (old, old))
    start = time.monotonic()
    saved = grading(course, "backup", "sauvegarder", "--confirmer", as_teacher=True)
    took = time.monotonic() - start
    said = saved.stdout + saved.stderr
    assert saved.returncode == 1 and "Sauvegarde écrite" in said, said
    assert "submitted/ben/oublier/illisible.txt (illisible (permission refusée))" in said, said
    ((_, archive),) = backups_in(course / "sauvegardes")
    with tarfile.open(archive) as tar:
        names = tar.getnames()
        assert tar.extractfile("submitted/ben/oublier/brouillon.ipynb").read() == b"{"
    assert "submitted/ben/oublier/oublier.ipynb" in names and "gradebook.db" in names
    print(f"backup with an old invalid notebook: {took:.1f} s")
    from grading.backup import _read_stable

    slept = []
    monkeypatch.setattr("grading.backup.time.sleep", slept.append)
    assert _read_stable(folder / "brouillon.ipynb") == b"{" and slept == []  # read once
    ahead = time.time() + 10 * 365 * 86400  # second attack: dated years ahead, read 20 times
    os.utime(folder / "brouillon.ipynb", (ahead, ahead))
    assert _read_stable(folder / "brouillon.ipynb") == b"{" and slept == []
    (folder / "en_cours.ipynb").write_bytes(b"{")  # the control: one being written now
    assert _read_stable(folder / "en_cours.ipynb") == b"{" and len(slept) == 20


def test_a_report_folder_it_cannot_write_never_undoes_the_backup_it_wrote(course, tmp_path):
    """Second attack, stop 58: rapport/ made read-only by a colleague: « Sauvegarde écrite »
    then « ✘ Aucune sauvegarde écrite », exit 2, and the purge never ran (night after night).
    The list is shown whole instead, and the purge runs."""
    folder = submit(course, "ana", "complete_vacuum")
    (folder / "lien").symlink_to("/etc/hostname")
    (course / "rapport").mkdir(exist_ok=True)
    (course / "rapport").chmod(0o500)
    try:
        saved = grading(course, "backup", "sauvegarder", "--confirmer", as_teacher=True)
    finally:
        (course / "rapport").chmod(0o700)
    said = saved.stdout + saved.stderr
    assert saved.returncode == 0 and "Aucune sauvegarde écrite" not in said, said
    assert "sauvegarde.log non écrit (permission refusée)" in said, said
    assert "submitted/ana/oublier/lien (lien symbolique" in said and "Purge" in said, said


def test_a_restore_stopped_outright_finishes_and_leaves_no_temporary_file(course, tmp_path):
    """A restore killed (kill -9) between a temporary file and its rename left it in a
    student's folder: the same command run again removes it (never a file of the archive)."""
    folder = submit(course, "ben", "complete_vacuum")
    (folder / ".restauration-0badc0de").write_bytes(b"le sien")
    # second attack, stop 58: her folder of that name stopped every rerun (unlink: EISDIR)
    (folder / ".restauration-0badc0df").mkdir()
    (folder / ".restauration-0badc0df" / "notes.txt").write_bytes(b"x")
    path, _, _ = backup(tmp_path / "sauv", grader_dir=course, confirm=True)
    fresh = copy_course(tmp_path / "neuf")
    again = fresh / "submitted" / "ben" / "oublier"
    again.mkdir(parents=True)
    (again / ".restauration-12345678").write_bytes(b"{")  # the stopped restore's
    (fresh / ".restauration-en-cours").write_text(f"{path.resolve()}\n", encoding="utf-8")
    restored = grading(fresh, "backup", "restaurer", str(path), "--confirmer")
    assert restored.returncode == 0, restored.stdout + restored.stderr
    assert sorted(p.name for p in again.iterdir()) == [
        ".restauration-0badc0de",
        ".restauration-0badc0df",
        "oublier.ipynb",
    ]
    assert (again / ".restauration-0badc0df" / "notes.txt").read_bytes() == b"x"


def test_an_archive_changed_between_the_two_readings_is_never_half_restored_unsaid(
    course, tmp_path, monkeypatch
):
    """Second attack, stop 58: an archive swapped after its check for one lacking a file
    restored « 6 fichier(s) », exit 0, her notebook missing; the rerun then said « abîmé »
    with no way out while every other command was refused. Now the missing file is named, and
    both say what to do."""
    import grading.backup as backup_module
    from grading.backup import HALF_RESTORED, BackupError

    submit(course, "ana", "complete_vacuum")
    path, _, _ = backup(tmp_path / "sauv", grader_dir=course, confirm=True)
    trimmed = tmp_path / "sans-ana.tar.gz"
    with tarfile.open(path) as old, tarfile.open(trimmed, "w:gz") as new:
        for info in old:
            if info.name != "submitted/ana/oublier/oublier.ipynb":
                new.addfile(info, old.extractfile(info))
    checked = backup_module._read_archive

    def swapped_once_checked(archive, keep=lambda name: True):
        found = checked(archive, keep)
        shutil.copyfile(trimmed, archive)  # the archive changes once checked
        return found

    monkeypatch.setattr(backup_module, "_read_archive", swapped_once_checked)
    fresh = copy_course(tmp_path / "neuf")
    with pytest.raises(BackupError) as stopped:
        restore(path, grader_dir=fresh, confirm=True)
    said = str(stopped.value)
    assert (
        "«\u00a0submitted/ana/oublier/oublier.ipynb\u00a0» absent" in said and HALF_RESTORED in said
    )
    monkeypatch.undo()
    with pytest.raises(BackupError) as again:
        restore(path, grader_dir=fresh, confirm=True)
    assert HALF_RESTORED in str(again.value), again.value


def test_a_restore_holds_one_file_at_a_time_in_memory(course, tmp_path):
    """Teacher's attack, stop 58: the restore held the whole archive in memory (3 x 200 MB:
    892 MB), so a class larger than the machine's memory was backed up and never restored. Its
    peak memory now stays below one large file of the class (a 300 MB one: 75 MB)."""
    size = 160 * 1024 * 1024  # the peak before: above it (the whole archive held)
    folder = submit(course, "ben", "complete_vacuum")
    with open(folder / "gros.bin", "wb") as big:
        big.truncate(size)  # zeros: cheap to compress, as heavy to hold
    path, _, _ = backup(tmp_path / "sauv", grader_dir=course, confirm=True)
    (folder / "gros.bin").unlink()
    fresh = copy_course(tmp_path / "neuf")
    peak = (  # the restore's own peak, measured by a parent of its own
        "import resource, subprocess, sys; done = subprocess.run(sys.argv[1:]); "
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024); "
        "sys.exit(done.returncode)"
    )
    restore = ("-m", "grading.backup", "restaurer", str(path), "--confirmer")
    proc = run_tool(fresh, sys.executable, "-c", peak, sys.executable, *restore)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    used = int(proc.stdout.split()[-1])
    print(f"restore of a {size >> 20} MB file: peak {used >> 20} MB")
    assert used < size, used
    assert (fresh / "submitted" / "ben" / "oublier" / "gros.bin").stat().st_size == size


def test_a_backup_of_another_format_is_refused_in_french(course, tmp_path):
    """Attack round 10: the manifest's format was never read, so a later course's backup, whose
    parts may mean other things, would be restored as this one's. Refused, nothing written."""
    from grading.backup import BackupError

    path, _, _ = backup(tmp_path / "sauv", grader_dir=course)
    later = tmp_path / "sauv" / "sauvegarde-20991231-000000.tar.gz"
    with tarfile.open(path) as old, tarfile.open(later, "w:gz") as new:
        for info in old:
            data = old.extractfile(info).read()
            if info.name == "manifest.json":
                data = json.dumps({**json.loads(data), "format": 2}).encode()
                info.size = len(data)
            new.addfile(info, io.BytesIO(data))
    fresh = copy_course(tmp_path / "neuf")
    with pytest.raises(BackupError, match="sauvegarde au format 2, cette version du cours lit"):
        restore(later, grader_dir=fresh, confirm=True)
    assert not (fresh / "gradebook.db").exists()


def test_graded_copies_not_whole_in_the_gradebook_are_left_out(graded_class, tmp_path):
    """A copy written after the gradebook copy began, or whose grades are not all in it, is
    left out with its feedback and named; a link planted in a graded folder is not followed."""
    shutil.copytree(graded_class.grader.parent, tmp_path / "cours", symlinks=True)
    grader = tmp_path / "cours" / "grader"
    later = time.time() + 60  # graded after the gradebook copy began
    os.utime(grader / "autograded" / "ana" / "oublier" / "oublier.ipynb", (later, later))
    with sqlite3.connect(grader / "gradebook.db") as con:
        con.execute(
            "DELETE FROM grade WHERE id = (SELECT g.id FROM grade g "
            "JOIN submitted_notebook sn ON g.notebook_id = sn.id "
            "JOIN submitted_assignment sa ON sn.assignment_id = sa.id "
            "WHERE sa.student_id = 'ben' LIMIT 1)"
        )
    con.close()
    (grader / "autograded" / "cyr" / "oublier" / "lien").symlink_to("/etc/passwd")
    (tmp_path / "sauv").mkdir()
    save = grading(grader, "backup", "sauvegarder", "--dossier", str(tmp_path / "sauv"))
    assert save.returncode == 0, save.stdout + save.stderr
    assert "Laissées de côté" in save.stdout, save.stdout
    [(_, archive)] = backups_in(tmp_path / "sauv")
    with tarfile.open(archive) as tar:
        names = tar.getnames()
        left_out = json.loads(tar.extractfile("manifest.json").read())["left_out"]
    expected = [f"{p}/{s}/oublier" for p in ("autograded", "feedback") for s in ("ana", "ben")]
    assert sorted(left_out) == sorted(expected), left_out
    assert all(name in save.stdout for name in expected), save.stdout
    assert not [n for n in names if n.startswith(tuple(expected))], names
    assert "autograded/cyr/oublier/oublier.ipynb" in names
    assert "feedback/cyr/oublier/oublier.html" in names
    assert "autograded/cyr/oublier/lien" not in names
    assert "autograded/cyr/oublier/lien (lien symbolique vers" in save.stderr, save.stderr
    assert "submitted/ana/oublier/oublier.ipynb" in names


def test_a_graded_copy_with_a_cell_the_gradebook_did_not_grade_is_left_out(graded_class, tmp_path):
    """Every grade count matches, the copy is older than the backup: still, a graded cell of
    the copy that the gradebook copy holds no grade for (the copy of another grading) means
    the backup cannot vouch for it: left out with its feedback (cyr is kept in the test above)."""
    shutil.copytree(graded_class.grader.parent, tmp_path / "cours", symlinks=True)
    grader = tmp_path / "cours" / "grader"
    copy = grader / "autograded" / "cyr" / "oublier" / "oublier.ipynb"
    before = copy.stat()
    nb = json.loads(copy.read_text(encoding="utf-8"))
    graded = [c for c in nb["cells"] if c.get("metadata", {}).get("nbgrader", {}).get("grade")]
    graded[0]["metadata"]["nbgrader"]["grade_id"] = "cellule_d_une_autre_notation"
    copy.write_text(json.dumps(nb), encoding="utf-8")
    os.utime(copy, ns=(before.st_atime_ns, before.st_mtime_ns))
    (tmp_path / "sauv").mkdir()
    save = grading(grader, "backup", "sauvegarder", "--dossier", str(tmp_path / "sauv"))
    assert save.returncode == 0, save.stdout + save.stderr
    [(_, archive)] = backups_in(tmp_path / "sauv")
    with tarfile.open(archive) as tar:
        left_out = json.loads(tar.extractfile("manifest.json").read())["left_out"]
    assert sorted(left_out) == ["autograded/cyr/oublier", "feedback/cyr/oublier"], left_out


def _save(grader: Path, folder: Path, *more: str) -> subprocess.CompletedProcess:
    folder.mkdir(parents=True, exist_ok=True)  # a folder given is the teacher's to make
    return grading(grader, "backup", "sauvegarder", "--dossier", str(folder), *more)


@dataclass
class BackedUp:
    """The graded class backed up once by the real command (``_save``: ``python -m
    grading.backup sauvegarder --dossier …``), and what that first backup said."""

    grader: Path  # the class's grader/ folder
    folder: Path  # the backups' folder (``--dossier``)
    first: subprocess.CompletedProcess  # the first backup


def _naming(folder: Path, place: Path) -> list[str]:
    """The files under `folder` (and the members of its archives) whose bytes name `place`."""
    needle = str(place).encode()
    found = []
    for path in sorted(folder.rglob("*")):
        if path.is_symlink() or not path.is_file():
            continue
        if needle in path.read_bytes():
            found.append(str(path))
        if path.name.endswith(".tar.gz"):
            with tarfile.open(path) as tar:
                for info in tar:
                    member = tar.extractfile(info)
                    if member is not None and needle in member.read():
                        found.append(f"{path}:{info.name}")
    return found


@pytest.fixture(scope="module")
def backed_up_class(tmp_path_factory) -> BackedUp:
    """The run's graded class (graded_class.class_in) backed up once for this module: the
    very first step test_a_backup_that_would_lose_grades_is_refused and
    test_a_backup_damaged_in_the_middle_is_named_never_used_nor_purged both took, the same
    command on the same class. Never written: each test copies it (``backed_up``). No file of
    the class, of its backups' folder or of its archive names the folder it sits in (checked),
    so a copy is the same class, backed up, elsewhere."""
    base = tmp_path_factory.mktemp("classe-sauvegardee")
    grader = class_in(base / "cours").grader
    first = _save(grader, base / "sauv")
    named = _naming(base, base)
    assert not named, f"the backed-up class names the folder it sits in: {named}"
    return BackedUp(grader, base / "sauv", first)


@pytest.fixture
def backed_up(backed_up_class, tmp_path) -> BackedUp:
    """A test's own copy of the backed-up class and of its backups' folder (times kept)."""
    course, folder = tmp_path / "cours", tmp_path / "sauv"
    shutil.copytree(backed_up_class.grader.parent, course, symlinks=True)
    shutil.copytree(backed_up_class.folder, folder, symlinks=True)
    return BackedUp(course / "grader", folder, backed_up_class.first)


def test_a_backup_that_would_lose_grades_is_refused(backed_up, tmp_path):
    """Issue 33, point 1: with the gradebook gone, empty, not a database or holding fewer
    students than the last backup, ``make sauvegarde`` writes nothing and says why in one French
    sentence (status 2) unless the teacher confirms; the purge the erasure advises
    (``GARDER=1``) then keeps the newest backup that holds a gradebook, and says why. The first,
    good backup is the module's (``backed_up``)."""
    grader, folder, first = backed_up.grader, backed_up.folder, backed_up.first
    assert first.returncode == 0, first.stdout + first.stderr
    assert "carnet de notes" in first.stdout and "SANS carnet" not in first.stdout
    [(_, good)] = backups_in(folder)
    # four good backups, the oldest ones a few days back
    now = datetime.now(UTC)
    for days in (1, 2, 3):
        shutil.copy(good, folder / f"sauvegarde-{now - timedelta(days=days):%Y%m%d-%H%M%S}.tar.gz")
    assert len(backups_in(folder)) == 4
    gradebook = grader / "gradebook.db"
    kept = gradebook.read_bytes()
    moved = tmp_path / "gradebook-mis-de-cote.db"
    gradebook.rename(moved)
    for damage, reason in (
        (None, "le carnet de notes est introuvable"),
        (b"", "le carnet de notes est vide"),
        (b"pas une base SQLite" * 100, "le carnet de notes est illisible"),
    ):
        if damage is not None:
            gradebook.write_bytes(damage)
        proc = _save(grader, folder, "--garder", "1")
        assert proc.returncode == 2, proc.stdout + proc.stderr
        [line] = proc.stderr.strip().splitlines()
        assert line.startswith("✘ Sauvegarde refusée, rien n'a été écrit\u00a0: " + reason), line
        assert "CONFIRMER=1" in line
        assert len(backups_in(folder)) == 4  # nothing written, nothing purged
        gradebook.unlink(missing_ok=True)
    # one student fewer than the last backup: refused too
    gradebook.write_bytes(kept)
    removed = nbgrader(grader, "db", "student", "remove", "dou", "--force")
    assert removed.returncode == 0, removed.stdout + removed.stderr
    fewer = _save(grader, folder)
    assert fewer.returncode == 2, fewer.stdout + fewer.stderr
    assert "3 élève(s)" in fewer.stderr and "4 élève(s)" in fewer.stderr, fewer.stderr
    assert len(backups_in(folder)) == 4
    # confirmed, a backup without the gradebook is written, and says so
    gradebook.unlink()
    confirmed = _save(grader, folder, "--confirmer", "--garder", "1")
    assert confirmed.returncode == 0, confirmed.stdout + confirmed.stderr
    assert "SANS carnet de notes" in confirmed.stdout
    assert "fichier(s) d'archives reçues" in confirmed.stdout
    # GARDER=1 kept the newest (no gradebook) and the newest good one, saying why
    left = [p for _, p in backups_in(folder)]
    assert len(left) == 2 and left[1] == good, left
    assert f"gardée\u00a0: {good.name} — la plus récente qui contient un carnet de notes" in (
        confirmed.stdout
    ), confirmed.stdout
    assert confirmed.stdout.count("effacée\u00a0: sauvegarde-") == 3, confirmed.stdout
    # a plain purge too: the good one stays, however old the rule would make it
    proc = grading(grader, "backup", "purger", "--dossier", str(folder), "--garder", "1")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert [p for _, p in backups_in(folder)] == left


def test_a_gradebook_damaged_inside_is_never_backed_up_kept_nor_restored(backed_up, tmp_path):
    """Attack (stop 53): a page damaged inside the gradebook, where the counts still read. The
    backup wrote it with status 0, the purge then kept it as the backup never deleted and
    deleted the sound ones, and a restore put it back. Now SQLite's own check refuses it
    (« fichier abîmé »); confirmed, it is written, yet the purge keeps the newest sound one;
    a restore of it is refused, nothing written."""
    grader, folder = backed_up.grader, backed_up.folder
    [(_, good)] = backups_in(folder)
    damage_inside(grader / "gradebook.db")
    refused = _save(grader, folder, "--garder", "1")
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert "le carnet de notes est illisible" in refused.stderr, refused.stderr
    assert "fichier abîmé" in refused.stderr and "Traceback" not in refused.stderr
    assert [p for _, p in backups_in(folder)] == [good]
    confirmed = _save(grader, folder, "--confirmer", "--garder", "1")
    assert confirmed.returncode == 0, confirmed.stdout + confirmed.stderr
    newest, kept = [p for _, p in backups_in(folder)]
    assert kept == good, confirmed.stdout
    assert f"gardée\u00a0: {good.name} — la plus récente qui contient un carnet de notes" in (
        confirmed.stdout
    )
    # as an older version wrote it: the damaged gradebook's counts in its manifest; the purge
    # reads the gradebook itself, never keeps it as the sound one (attack, stop 53)
    with tarfile.open(newest) as tar:
        members = [(info, tar.extractfile(info).read()) for info in tar]
    with tarfile.open(newest, "w:gz") as tar:
        for info, data in members:
            if info.name == "manifest.json":
                manifest = json.loads(data)
                manifest["gradebook"] = {"students": 4, "grades": 40}
                data = json.dumps(manifest).encode()
                info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    purged = grading(grader, "backup", "purger", "--dossier", str(folder), "--garder", "1")
    assert purged.returncode == 0, purged.stdout + purged.stderr
    assert [p for _, p in backups_in(folder)] == [newest, good], purged.stdout
    assert f"gardée\u00a0: {good.name} — la plus récente qui contient un carnet de notes" in (
        purged.stdout
    )
    fresh = clone_head(tmp_path / "clone") / "grader"
    with pytest.raises(BackupError, match=f"{newest.name} contient un carnet de notes illisible"):
        restore(newest, grader_dir=fresh, confirm=True)
    assert not (fresh / "gradebook.db").exists() and not (fresh / "submitted").exists()


def test_retention_by_age_at_every_backup(course, tmp_path):
    """Issue 33, point 4: the 30 days the erasure announces are applied by the step it names:
    ``make sauvegarde`` with no option deletes a backup older than 30 days, keeps a younger one;
    ``make purge-sauvegardes`` with no option does the same; the newest backup with a gradebook
    is never deleted, however old."""
    folder = tmp_path / "sauv"
    first = _save(course, folder)
    assert first.returncode == 0, first.stdout + first.stderr
    [(_, path)] = backups_in(folder)
    now = datetime.now(UTC)
    old, young = (folder / f"sauvegarde-{now - timedelta(days=d):%Y%m%d-%H%M%S}.tar.gz"
                  for d in (31, 29))  # fmt: skip
    path.rename(old)  # the only backup, 31 days old: kept, it is the one with a gradebook
    proc = grading(course, "backup", "purger", "--dossier", str(folder))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "rétention\u00a0: 30 jours" in proc.stdout
    assert f"gardée\u00a0: {old.name} — la plus récente qui contient un carnet de notes" in (
        proc.stdout
    )
    assert old.exists()
    shutil.copy(old, young)
    again = _save(course, folder)  # a new backup: the 31-day-old one expires now
    assert again.returncode == 0, again.stdout + again.stderr
    assert f"effacée\u00a0: {old.name}" in again.stdout, again.stdout
    assert f"gardée\u00a0: {young.name} — moins de 30 jours" in again.stdout, again.stdout
    assert not old.exists() and young.exists() and len(backups_in(folder)) == 2

    # third helper's attack: a name dated in the future (another machine's clock) was taken for
    # the newest backup, and GARDER=1 deleted the one just written; a name with an impossible
    # date (30 February) stopped the backup, the purge and the erasure on a traceback
    ahead = folder / "sauvegarde-20991231-000000.tar.gz"
    shutil.copy(young, ahead)
    impossible = folder / "sauvegarde-20260230-120000.tar.gz"
    impossible.write_bytes(b"pas une sauvegarde du cours")
    assert backups_in(folder)[0][1] == ahead  # by its name, the newest
    third = _save(course, folder, "--garder", "1")
    assert (third.returncode, third.stderr) == (0, ""), third.stdout + third.stderr
    [written] = re.findall(r"Sauvegarde écrite\u00a0: (\S+) \(", third.stdout)
    assert Path(written).exists(), third.stdout
    assert f"effacée\u00a0: {young.name}" in third.stdout and not young.exists(), third.stdout
    assert f"gardée\u00a0: {ahead.name} — DATÉE DANS LE FUTUR" in third.stdout, third.stdout
    assert ahead.exists() and impossible.read_bytes() == b"pas une sauvegarde du cours"
    assert impossible not in [p for _, p in backups_in(folder)]


def test_a_backup_named_in_the_future_is_never_purged_nor_promised_to_expire(backed_up):
    """Fourth helper's attack: a name dated in 9999 stopped the erasure on an OverflowError, a
    name dated in 2030 was promised to expire (the purge never deletes it), and one dated four
    minutes ahead, within the clock's margin, let GARDER=1 delete the backup just written."""
    grader, folder = backed_up.grader, backed_up.folder
    [(_, good)] = backups_in(folder)
    far = Path(shutil.copy(good, folder / "sauvegarde-99991231-235959.tar.gz"))
    dry = grading(grader, "erase_learner", "ana", "--sauvegardes", str(folder))
    assert "Traceback" not in dry.stderr, dry.stderr
    said = "sauvegarde datée dans le futur, à supprimer à la main"
    assert f"  - {said}\u00a0: {far}" in dry.stdout, dry.stdout + dry.stderr
    assert "99991231" not in dry.stdout.split(said)[0]  # no expiry promised for it
    far.unlink()
    soon = folder / f"sauvegarde-{datetime.now(UTC) + timedelta(minutes=4):%Y%m%d-%H%M%S}.tar.gz"
    shutil.copy(good, soon)
    saved = _save(grader, folder, "--garder", "1")
    assert saved.returncode == 0, saved.stdout + saved.stderr
    [written] = re.findall(r"Sauvegarde écrite\u00a0: (\S+) \(", saved.stdout)
    assert f"gardée\u00a0: {Path(written).name} — écrite à l'instant" in saved.stdout, saved.stdout
    assert Path(written).exists() and soon.exists() and not good.exists()


def _damage(archive: Path, where: int, junk: bytes = b"\0\0\0\0") -> None:
    """`junk` (four zero bytes) at `where` in the compressed stream, with ``dd`` (the DPO's
    way)."""
    subprocess.run(
        ["dd", f"of={archive}", "bs=1", f"seek={where}", "conv=notrunc", "status=none"],
        input=junk,
        check=True,
    )


def _zlib_breaking_damage(archive: Path) -> tuple[int, bytes]:
    """An offset and four bytes there that make the deflate stream itself invalid
    (``zlib.error``, the DPO's traceback), not only its checksum wrong: found on a scratch copy.
    Where four zero bytes still decode depends on the archive's content (fresh55 found none of
    39 places in one): 400 places, zeros then ones."""
    import gzip
    import zlib

    data = archive.read_bytes()
    for junk in (b"\0\0\0\0", b"\xff\xff\xff\xff"):
        for k in range(1, 400):
            where = len(data) * k // 400
            try:
                gzip.decompress(data[:where] + junk + data[where + 4 :])
            except zlib.error:
                return where, junk
            except (OSError, EOFError):
                continue
    raise AssertionError("aucun endroit ne casse le flux deflate")


def test_a_backup_damaged_in_the_middle_is_named_never_used_nor_purged(backed_up, tmp_path):
    """DPO attack, point 7: a backup corrupted mid-file made ``make restauration``,
    ``make purge-sauvegardes`` and the purge of ``make sauvegarde`` stop on a ``zlib.error``
    traceback. The restore refuses it, naming it; the purge keeps it (never deleted unasked,
    never counted as the backup of the gradebook) and names it; ``make sauvegarde`` still
    writes its backup. The first, good backup is the module's (``backed_up``)."""
    grader, folder, first = backed_up.grader, backed_up.folder, backed_up.first
    assert first.returncode == 0, first.stdout + first.stderr
    [(_, good)] = backups_in(folder)
    now = datetime.now(UTC)
    old_good, old_bad, newest_bad = (
        folder / f"sauvegarde-{now - timedelta(days=d):%Y%m%d-%H%M%S}.tar.gz" for d in (31, 32, 40)
    )
    good.rename(old_good)  # expired, yet the newest whole one with a gradebook
    for bad in (old_bad, newest_bad):
        shutil.copy(old_good, bad)
    newest_bad = newest_bad.rename(folder / f"sauvegarde-{now:%Y%m%d-%H%M%S}.tar.gz")
    _damage(old_bad, *_zlib_breaking_damage(old_bad))  # the DPO's zlib.error
    _damage(newest_bad, newest_bad.stat().st_size // 2)  # only the checksum can tell, here
    expired = folder / f"sauvegarde-{now - timedelta(days=50):%Y%m%d-%H%M%S}.tar.gz"
    shutil.copy(old_good, expired)  # a whole expired one: the purge does delete (control)

    fresh = copy_course(tmp_path / "neuf")
    proc = grading(fresh, "backup", "restaurer", str(newest_bad), "--confirmer")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    assert f"✘ Sauvegarde illisible\u00a0: {newest_bad} (archive abîmée ou tronquée)." in (
        proc.stderr
    )
    assert not (fresh / "gradebook.db").exists() and not (fresh / "submitted").exists()

    def damaged_named(out: str) -> bool:
        return all(
            f"✘ Sauvegarde abîmée, gardée telle quelle\u00a0: Sauvegarde illisible\u00a0: {b} "
            in out
            for b in (old_bad, newest_bad)
        )

    purged = grading(grader, "backup", "purger", "--dossier", str(folder))
    assert "Traceback" not in purged.stderr, purged.stderr
    assert purged.returncode == 1, purged.stdout + purged.stderr
    assert damaged_named(purged.stderr), purged.stderr
    assert f"effacée\u00a0: {expired.name}" in purged.stdout, purged.stdout
    assert f"gardée\u00a0: {old_good.name} — la plus récente qui contient un carnet" in (
        purged.stdout
    )
    assert [p for _, p in backups_in(folder)] == [newest_bad, old_good, old_bad]

    # the check of the last backup passes over the newest (damaged) and names it; the purge
    # reads the expired ones: the whole one goes, the damaged one stays, named
    saved = _save(grader, folder)
    assert "Traceback" not in saved.stderr, saved.stderr
    assert "Sauvegarde écrite" in saved.stdout, saved.stdout + saved.stderr
    assert damaged_named(saved.stderr), saved.stderr
    assert saved.returncode == 1, saved.stdout + saved.stderr
    left = [p for _, p in backups_in(folder)]
    assert len(left) == 3 and newest_bad in left and old_bad in left, left
    assert old_good not in left  # the new backup is now the one with the gradebook


def test_a_gradebook_on_a_server_is_named_without_its_password(course):
    """`make sauvegarde` leaves a server's gradebook to its own tools (pg_dump) and says so,
    naming the server without the URL's password (before « @ » or in its query)."""
    from grading.backup import BackupError

    config = course / "nbgrader_config.py"
    settings = config.read_text(encoding="utf-8")
    for url in ("postgresql://prof:S3cret@serveur/carnet", "postgresql:///carnet?password=S3cret"):
        config.write_text(f"{settings}\nc.CourseDirectory.db_url = {url!r}\n", encoding="utf-8")
        with pytest.raises(BackupError) as refused:
            backup(grader_dir=course)
        said = str(refused.value)
        assert "n'est pas un fichier SQLite" in said and "carnet" in said and "pg_dump" in said
        assert "S3cret" not in said, said


def test_a_purge_of_a_folder_that_does_not_exist_says_so(tmp_path, capsys):
    """Teacher's walk, stop 60: `make purge-sauvegardes DOSSIER=/media/cle/sauvegarde` (the key
    not mounted, or « sauvegardes » misspelt) said « 0 sauvegarde(s) effacée(s), 0 gardée(s) dans
    /media/cle/sauvegarde » and exit 0: the purge the teacher asked for did nothing, without a
    word; `make sauvegarde` with the same folder made it, on the local disk, and wrote the backup
    there. Both name the folder given, create nothing, status 2 (before reading any class); the
    control, an empty folder that exists, is an empty purge."""
    from grading.backup import main

    missing = tmp_path / "cle" / "sauvegarde"
    for command, done in (("purger", "purgé"), ("sauvegarder", "sauvegardé")):
        assert main([command, "--dossier", str(missing)]) == 2
        out, err = capsys.readouterr()
        assert out == ""
        said = f"✘ Aucun dossier de sauvegardes {missing}\u00a0: rien n'a été {done}."
        assert err.startswith(said), err
        assert "DOSSIER=" in err and not missing.parent.exists()
    missing.mkdir(parents=True)
    assert main(["purger", "--dossier", str(missing)]) == 0
    assert "0 sauvegarde(s) effacée(s), 0 gardée(s)" in capsys.readouterr().out
