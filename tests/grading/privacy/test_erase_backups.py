"""The backups (learner_places ``_scan_pending`` and ``_backup_holds``): what a backup holds of
her (a gradebook copy, a classmate's mention, never the TP's own text), a damaged backup, a
gradebook copy in the backups folder, and a restore that erases her again."""

from __future__ import annotations

import dataclasses
import hashlib
import os
import shutil
import signal
import sqlite3
import tarfile
import zipfile
import zlib
from contextlib import closing
from pathlib import Path

import pytest
from erase_scenes import ROSTER, _erase, _released_tp, _setup
from grading_course import copy_course, grading, start_grading
from nbgrader.api import Gradebook

pytestmark = [pytest.mark.timeout(300)]


def _without(c, sid: str) -> None:
    """The small class without `sid`, as after their erasure: their submitted folder, roster
    line and gradebook row gone, the gradebook vacuumed (no free page holds them)."""
    grader = c["grader"]
    shutil.rmtree(grader / "submitted" / sid)
    line = next(x for x in ROSTER.splitlines(keepends=True) if x.startswith(f"{sid};"))
    c["roster"].write_text(ROSTER.replace(line, ""))
    with Gradebook(f"sqlite:///{grader / 'gradebook.db'}") as gb:
        gb.remove_student(sid)
    with closing(sqlite3.connect(grader / "gradebook.db")) as con:
        con.execute("VACUUM")


@pytest.mark.slow
def test_a_backup_holding_a_gradebook_copy_in_a_classmates_folder_is_pending(petite_classe):
    """DPO attack, item 1 (the next backup): ben's row in a gradebook copy inside cyr's folder
    went into a backup that holds no folder, roster line or gradebook row of ben; the erasure
    did not list that backup among what to purge. Positive control: the same backup without
    the copy holds nothing of him."""
    from grading.backup import backup
    from grading.privacy.learner_places import _backup_holds, _Who

    c = petite_classe
    grader = c["grader"]
    copy = grader / "submitted" / "cyr" / "oublier" / "carnet.db"
    shutil.copy(grader / "gradebook.db", copy)
    _without(c, "ben")
    ben = _Who("ben", "Ben", "Durand", "ben.durand@exemple.fr")
    with_copy, *_ = backup(dest_dir=c["tmp"] / "avec", roster=c["roster"], grader_dir=grader)
    copy.unlink()
    without, *_ = backup(dest_dir=c["tmp"] / "sans", roster=c["roster"], grader_dir=grader)
    assert _backup_holds(with_copy, ben)
    assert not _backup_holds(without, ben)
    # the same backup damaged mid-stream (zlib's « invalid block », not a gzip error): it may
    # hold him (None: damaged), never a traceback that stops the erasure
    data = without.read_bytes()
    damaged = c["tmp"] / "abimee.tar.gz"
    tries = ((o, p) for p in (bytes(4), b"\xff" * 4) for o in range(20, len(data) - 16, 7))
    for offset, noise in tries:
        damaged.write_bytes(data[:offset] + noise + data[offset + 4 :])
        try:
            with tarfile.open(damaged, "r:gz") as tar:
                for _ in tar:
                    pass
        except zlib.error:
            break
        except (OSError, tarfile.TarError, EOFError):
            continue
    else:
        pytest.fail("no offset gives zlib's error")
    assert _backup_holds(damaged, ben) is None


@pytest.mark.slow
def test_a_restore_erases_her_again_even_with_a_file_to_clean_by_hand(petite_classe):
    """Review of the DPO fixes: a SQLite file naming ana sat in cyr's folder when the backup was
    taken; the teacher deleted it as the erasure asked, and erased her. Restoring that backup
    (a disk lost): her re-erasure met the file to clean by hand, refused everything, and left
    her submissions, roster line and gradebook row restored. Now her own places are erased
    again and the file is named (a failure of the restore, exit 1); the control: cyr stays."""
    from contextlib import closing

    from grading.backup import backup, restore
    from grading.erase_learner import erase

    c = petite_classe
    grader = c["grader"]
    notes = grader / "submitted" / "cyr" / "oublier" / "notes.db"
    with closing(sqlite3.connect(notes)) as con:
        con.execute("CREATE TABLE t (nom TEXT)")
        con.execute("INSERT INTO t VALUES ('Ana Martin')")
        con.commit()
    folder = c["tmp"] / "sauv"
    archive, *_ = backup(folder, c["roster"], None, grader, confirm=True)
    notes.unlink()  # the teacher deletes it, as the erasure asks
    setup = dataclasses.replace(_setup(c), backups=folder)  # its register beside the backups
    assert not erase("ana", setup, confirm=True, control="cyr").failures
    fresh = copy_course(c["tmp"] / "neuf")
    _counts, done = restore(archive, fresh / "eleves.csv", None, fresh)
    assert done.erased == ["ana"], done
    assert not (fresh / "submitted" / "ana").exists()
    assert "ana" not in (fresh / "eleves.csv").read_text(encoding="utf-8")
    assert any("notes.db" in f for f in done.failures), done.failures
    assert (fresh / "submitted" / "cyr" / "oublier" / "notes.db").exists()  # never rewritten
    assert (fresh / "submitted" / "cyr").is_dir()  # the control


@pytest.mark.slow
def test_what_a_backup_did_not_save_of_an_erased_learner_is_never_told_back(petite_classe):
    """Teacher's attack, stop 58: the restore wrote its backup's « not saved » list (a link
    of hers, « notes-Ana-Martin.txt ») into rapport/restauration.log after erasing her again:
    her name came back into the restored class. The list is written first, then the
    re-erasure cleans it; the teacher is told where it is, never her names on screen."""
    from grading.backup import backup, restore
    from grading.erase_learner import erase

    c = petite_classe
    grader = c["grader"]
    (grader / "submitted" / "ana" / "oublier" / "notes-Ana-Martin.txt").symlink_to("/etc/hostname")
    (grader / "submitted" / "cyr" / "oublier" / "tube").symlink_to("/etc/hostname")  # control
    folder = c["tmp"] / "sauv"
    unsaved: list = []
    archive, *_ = backup(folder, c["roster"], None, grader, confirm=True, not_saved=unsaved)
    assert len(unsaved) == 2, unsaved
    setup = dataclasses.replace(_setup(c), backups=folder)
    assert not erase("ana", setup, confirm=True, control="cyr").failures
    fresh = copy_course(c["tmp"] / "neuf")
    told: list[str] = []
    _counts, done = restore(archive, fresh / "eleves.csv", None, fresh, told=told)
    assert done.erased == ["ana"], done
    log = fresh / "rapport" / "restauration.log"
    assert any(f"liste dans {log}" in line for line in told), told
    kept = log.read_text(encoding="utf-8")
    assert "submitted/cyr/oublier/tube" in kept, kept  # the control: a classmate's stays
    for her in ("Ana", "Martin", "submitted/ana/"):
        assert her not in kept and not any(her in line for line in told), (her, kept, told)


@pytest.mark.slow
def test_a_damaged_backup_is_to_delete_by_hand_before_the_erasure(petite_classe):
    """Review of the DPO fixes: a damaged backup (bytes zeroed mid-archive) was listed as
    expiring under the retention, but the purge never deletes a damaged backup: her full copy
    stayed for good after « Preuve faite ». Now it is a file to delete by hand, and nothing is
    erased while it stays; the control: once the teacher deletes it, the erasure is proved."""

    from grading.backup import backup
    from grading.erase_learner import ErasureError, erase

    c = petite_classe
    for i in range(10):  # some bulk, so that the damage lands in the compressed data
        (c["grader"] / "submitted" / "ben" / "oublier" / f"f{i}.txt").write_text(
            os.urandom(20000).hex()
        )
    folder = c["tmp"] / "sauv"
    archive, *_ = backup(folder, c["roster"], None, c["grader"], confirm=True)
    data = bytearray(archive.read_bytes())
    middle = len(data) // 2
    data[middle : middle + 4] = bytes(4)
    archive.write_bytes(bytes(data))
    setup = dataclasses.replace(_setup(c), backups=folder)
    with pytest.raises(ErasureError, match="sauvegarde abîmée à supprimer à la main"):
        erase("ben", setup, confirm=True, control="cyr")
    assert (c["grader"] / "submitted" / "ben").is_dir()  # nothing erased
    archive.unlink()
    assert not erase("ben", setup, confirm=True, control="cyr").failures


@pytest.mark.slow
def test_a_gradebook_copy_the_teacher_keeps_in_the_backups_folder_is_named(petite_classe):
    """Review4: the class scan skips the whole backups folder (grader/sauvegardes/), and the
    pending list reads only the files named as ``make sauvegarde`` names them
    (sauvegarde-<date>.tar.gz). A copy of the gradebook the teacher put there before the new
    school year (``cp gradebook.db sauvegardes/carnet-juin.db``), or a backup she renamed
    (sauvegarde-avant-rentree.tar.gz), holds ana's row, and the erasure says « Preuve faite »,
    listing no backup to purge. Control: the same copy in grader/hub/ is named."""
    import gzip

    from grading.erase_learner import ErasureError

    c = petite_classe
    grader = c["grader"]
    source = grader / "gradebook.db"
    assert b"ana.martin@exemple.fr" in source.read_bytes()
    control = grader / "hub" / "carnet-juin.db"
    shutil.copy(source, control)
    with pytest.raises(ErasureError, match="carnet-juin.db"):  # control: named
        _erase(c, "ana")
    control.unlink()
    backups = grader / "sauvegardes"
    backups.mkdir(exist_ok=True)
    copy = backups / "carnet-juin.db"
    shutil.copy(source, copy)
    with pytest.raises(ErasureError, match="carnet-juin.db"):
        _erase(c, "ana")
    copy.unlink()
    renamed = backups / "sauvegarde-avant-rentree.tar.gz"
    renamed.write_bytes(gzip.compress(source.read_bytes()))
    with pytest.raises(ErasureError, match="sauvegarde-avant-rentree"):
        _erase(c, "ana")


@pytest.mark.slow
def test_a_backup_holding_a_classmates_mention_of_the_learner_is_pending(petite_classe):
    """Review5: since review4 a backup ``make sauvegarde`` names is skipped by the class scan
    (« _scan_pending »), and ``_backup_holds`` looks there for her folder, roster line and
    SQLite rows only, never for a mention. Ben's notebook names « Ana Martin » (his partner,
    enrolled after the backup); with ``CAVIARDER=1`` his live copy is redacted, the backup
    keeps it, is not listed among the backups to purge, and « Preuve faite » is said; the
    same archive renamed by hand is named by the class scan. Control: a backup holding her own
    folder is pending."""
    from grading.backup import backup
    from grading.privacy.learner_places import _backup_holds, _Who

    c = petite_classe
    grader = c["grader"]
    ana = _Who("ana", "Ana", "Martin", "ana.martin@exemple.fr")
    with_her, *_ = backup(dest_dir=c["tmp"] / "avec", roster=c["roster"], grader_dir=grader)
    assert _backup_holds(with_her, ana)  # control: her folder, her row
    _without(c, "ana")  # the class before she enrolled
    notebook = grader / "submitted" / "ben" / "oublier" / "oublier.ipynb"
    notebook.write_text('{"copie de": "ben", "binome": "Ana Martin"}', encoding="utf-8")
    mention, *_ = backup(dest_dir=c["tmp"] / "sans", roster=c["roster"], grader_dir=grader)
    with tarfile.open(mention) as tar:  # Ben's notebook, her name in it
        held = [m for m in tar if m.isfile() and m.name.endswith("ben/oublier/oublier.ipynb")]
        assert b"Ana Martin" in tar.extractfile(held[0]).read()
    assert _backup_holds(mention, ana)


@pytest.mark.slow
def test_a_backup_made_after_her_erasure_holding_only_the_tp_s_text_is_not_pending(
    petite_classe,
):
    """Review6: since f62fe1b ``_backup_holds`` counts a mention of her in any member, but
    with ``mention_pattern(who)`` alone: neither the released TP's lines (the class scan's
    ``released``) nor a classmate's own name are left out. The TP names a sample learner as
    data (« `alice` », its ``user_id``; here « `ana` »), so every classmate's copy in a backup
    holds it: a backup ``make sauvegarde`` made after her erasure, without her folder, row or
    line, is « sauvegarde » pending for her, and so is the fresh one its advice makes
    (« make sauvegarde CONFIRMER=1 GARDER=1 »): the pending list never empties. Control: the
    class scan counts no mention in the same copy; Ben's own words about her are held."""
    import json

    from grading.backup import backup
    from grading.privacy.learner_places import Context, _backup_holds, _Who, mention_pattern, scan

    c = petite_classe
    grader = c["grader"]
    given, cell, nb = _released_tp(c)
    copy = grader / "submitted" / "ben" / "oublier" / "oublier.ipynb"
    copy.write_text(json.dumps(nb, indent=1), encoding="utf-8")  # the TP as Ben handed it in
    ana = _Who("ana", "Ana", "Martin", "ana.martin@exemple.fr")
    found = {f.where for f in scan("ana", _setup(c)).found}
    assert str(copy) not in found  # control: the TP's own line is no mention in the class
    _without(c, "ana")  # the class once she is erased
    after, *_ = backup(dest_dir=c["tmp"] / "apres", roster=c["roster"], grader_dir=grader)
    mine = {"cell_type": "markdown", "id": "c2", "metadata": {}, "source": ["Relu avec Ana."]}
    copy.write_text(json.dumps({**nb, "cells": [cell, mine]}, indent=1), encoding="utf-8")
    his, *_ = backup(dest_dir=c["tmp"] / "binome", roster=c["roster"], grader_dir=grader)
    ctx = Context(_setup(c))  # what the erasure reads of the class: its released TP
    mentions = mention_pattern(ana, others=ctx.classmates, released=ctx.released_lines)
    assert _backup_holds(his, ana, mentions)  # control: his own words about her
    assert not _backup_holds(after, ana, mentions)


def _files(course: Path) -> dict[str, str]:
    """Every file of a course copy (its code's caches aside) with the SHA-256 of its bytes."""
    return {
        str(p.relative_to(course)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(course.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


def _size(path: Path) -> int:
    """The size of `path`, -1 when there is none."""
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return -1


@pytest.mark.slow
def test_a_restore_killed_while_it_erases_her_again_is_finished_by_the_same_command(
    petite_classe, monkeypatch
):
    """A restore killed (kill -9, the machine off) while it erased ben again, in the middle of
    rewriting the archive received from the school's platform without his copy: the same
    command run again said « ✘ effacement incomplet : ben : le témoin « ana » n'est plus
    trouvé tel qu'il était dans : … .ent.zip.oubli … », though ben was erased whole: the copy
    of that archive the killed erasure was writing, left beside it, was found (for ana too),
    then replaced by the new erasure's own copy. The rerun now ends as a restore never stopped:
    the same words and status, the same class, nothing of ben, no temporary file left (in the
    course or in $TMPDIR)."""
    from grading.backup import backup
    from grading.erase_learner import Setup, scan

    c = petite_classe
    grader, tmp = c["grader"], c["tmp"]
    received = grader / "downloaded" / "oublier" / "archive"
    received.mkdir(parents=True)
    with zipfile.ZipFile(received / "ent.zip", "w") as zf:
        for sid in ("ana", "ben", "cyr"):
            zf.writestr(f"ent/{sid}/oublier.ipynb", f'{{"copie de": "{sid}"}}')
        # bulk, so that rewriting the archive takes long enough to be caught in the middle
        zf.writestr("ent/cyr/donnees.bin", bytes(40 << 20), compress_type=zipfile.ZIP_STORED)
    archive, *_ = backup(None, c["roster"], None, grader, confirm=True)
    assert not _erase(c, "ben").failures  # recorded in the register beside the backup
    temporary = tmp / "tmpdir"  # the restores' $TMPDIR: what a kill -9 leaves there shows
    temporary.mkdir()
    monkeypatch.setenv("TMPDIR", str(temporary))

    def restore(course: Path, *, started: bool = False):
        args = ("backup", "restaurer", str(archive), "--eleves", str(course / "eleves.csv"))
        return start_grading(course, *args) if started else grading(course, *args)

    whole = copy_course(tmp / "jamais-arrete")  # the control: a restore never stopped
    expected = restore(whole)
    assert expected.returncode == 1, expected.stdout + expected.stderr
    assert "effacé(s) de nouveau de la classe restaurée\u00a0: «\u00a0ben\u00a0»" in (
        expected.stderr
    )
    assert "effacement incomplet" not in expected.stderr, expected.stderr
    fresh = copy_course(tmp / "arrete")
    marker = fresh / ".restauration-en-cours"
    copying = fresh / "downloaded" / "oublier" / "archive" / ".ent.zip.oubli"
    proc = restore(fresh, started=True)
    try:
        # the re-erasure has written part of the archive without ben (polled, never slept)
        while not (marker.exists() and _size(copying) > 0):
            assert proc.poll() is None, proc.communicate()
        os.killpg(proc.pid, signal.SIGKILL)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
    again = restore(fresh)
    said = again.stdout + again.stderr
    assert "effacement incomplet" not in said, said
    assert (again.returncode, again.stderr) == (expected.returncode, expected.stderr), said
    assert again.stdout == expected.stdout, said
    left = sorted(p.name for p in temporary.rglob("*"))
    assert not left, f"laissé dans $TMPDIR par la restauration arrêtée\u00a0: {left}"
    files, control = _files(fresh), _files(whole)
    assert sorted(files) == sorted(control), set(files) ^ set(control)
    for name in ("eleves.csv", *(n for n in files if n.startswith(("submitted/", "downloaded/")))):
        assert files[name] == control[name], name
    with zipfile.ZipFile(fresh / "downloaded" / "oublier" / "archive" / "ent.zip") as zf:
        assert not [n for n in zf.namelist() if "/ben/" in n], zf.namelist()
    with closing(sqlite3.connect(fresh / "gradebook.db")) as con:
        assert con.execute("SELECT id FROM student ORDER BY id").fetchall() == [("ana",), ("cyr",)]
    setup = Setup(grader_dir=fresh, roster=fresh / "eleves.csv")
    assert scan("ben", setup).found == []  # the erasure's own scan: nothing of him
    assert scan("ana", setup).found  # the control: it finds a learner still there


@pytest.mark.slow
def test_the_log_a_killed_re_erasure_was_cleaning_leaves_no_copy_after_the_rerun(petite_classe):
    """The same stop, while the re-erasure cleaned ben's names from rapport/restauration.log
    (the backup's « not saved » list, which names ana's link too): its copy of the log, left
    beside it, named ana, the control; the new erasure replaced it by its own, and its proof
    failed (« le témoin « ana » n'est plus trouvé »). The rerun removes it first."""
    from grading.backup import backup, restore

    c = petite_classe
    grader = c["grader"]
    for sid in ("ana", "ben"):
        (grader / "submitted" / sid / "oublier" / f"lien-{sid}").symlink_to("/etc/hostname")
    archive, *_ = backup(None, c["roster"], None, grader, confirm=True)
    assert not _erase(c, "ben").failures
    fresh = copy_course(c["tmp"] / "neuf")
    # what the killed restore left: its marker, and the copy of the log it was writing
    (fresh / ".restauration-en-cours").write_text(f"{archive.resolve()}\n", encoding="utf-8")
    (fresh / "rapport").mkdir()
    left = fresh / "rapport" / ".restauration.log.oubli"
    left.write_text("submitted/ana/oublier/lien-ana (lien symbolique)\n", encoding="utf-8")
    _counts, done = restore(archive, fresh / "eleves.csv", None, fresh)
    assert done.erased == ["ben"] and not done.failures, done
    assert not left.exists()
    assert "lien-ana" in (fresh / "rapport" / "restauration.log").read_text(encoding="utf-8")


# a connection that validated changes, then began another and died in its middle: the rollback
# journal it leaves holds the pages as they were after the first ones
_HOT_JOURNAL = """
import os, sqlite3, sys
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("PRAGMA journal_mode = DELETE")
db.execute("UPDATE student SET first_name = 'Zoé' WHERE id = 'ana'")
db.execute("CREATE TABLE pad (x)")
db.executemany("INSERT INTO pad VALUES (?)", [("x" * 500,)] * 400)
db.execute("PRAGMA cache_size = 2")  # the change spills into the file: its journal is synced
db.execute("BEGIN")
db.execute("UPDATE student SET first_name = 'Yves' WHERE id = 'ana'")
db.execute("UPDATE pad SET x = 'y'")
os._exit(0)
"""


def test_a_gradebook_journal_a_killed_re_erasure_left_is_not_played_on_the_restored_one(
    petite_classe,
):
    """Review of stop 59's resumed restore: killed in the middle of a write to the gradebook,
    the re-erasure leaves its rollback journal beside it. The rerun writes the gradebook again
    from the archive, and SQLite then played that journal, pages of another state of the file,
    onto it at its first opening: a classmate's row came back as it was in the killed run (or
    the file came out damaged). The rerun removes the journals of the files it writes whole."""
    import subprocess
    import sys

    from grading.backup import backup, restore

    c = petite_classe
    grader = c["grader"]
    archive, *_ = backup(None, c["roster"], None, grader, confirm=True)
    elsewhere = c["tmp"] / "etat-du-run-tue"
    elsewhere.mkdir()
    shutil.copy(grader / "gradebook.db", elsewhere / "gradebook.db")
    subprocess.run([sys.executable, "-c", _HOT_JOURNAL, elsewhere / "gradebook.db"], check=True)
    journal = elsewhere / "gradebook.db-journal"
    assert journal.stat().st_size > 0
    assert not _erase(c, "ben").failures
    fresh = copy_course(c["tmp"] / "neuf")
    (fresh / ".restauration-en-cours").write_text(f"{archive.resolve()}\n", encoding="utf-8")
    shutil.copy(journal, fresh / "gradebook.db-journal")
    _counts, done = restore(archive, fresh / "eleves.csv", None, fresh)
    assert done.erased == ["ben"] and not done.failures, done
    assert not (fresh / "gradebook.db-journal").exists()
    with closing(sqlite3.connect(fresh / "gradebook.db")) as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        names = dict(db.execute("SELECT id, first_name FROM student"))
    assert names == {"ana": "Ana", "cyr": "Cyr"}, names
