"""Back up, restore and purge what an instructor cannot rebuild: the gradebook, the submissions,
the graded copies, the feedback pages, the archives received, the roster, the hub's database
(``make sauvegarde``, ``make restauration``, ``make purge-sauvegardes``). The rules and their
reasons, for the teacher: grader/README.md, « Sauvegarder et restaurer ». For a maintainer:

- the gradebook is copied first; a graded copy is kept only if that copy vouches for every grade
  of it and none of its files changed since a second before it began (nbgrader removes the
  folder, saves the grades, then writes the notebook); its feedback only with it; the others are
  named in the manifest (``left_out``) and regraded after a restore;
- a backup holding less than the last one is refused unless confirmed: a purge would otherwise
  leave only the backup of a lost gradebook; the newest backup with a gradebook is never purged;
- retention reads the UTC time in the name, not the mtime (a copied backup keeps its age).
"""

from __future__ import annotations

import fcntl
import gzip
import hashlib
import io
import json
import os
import re
import secrets
import sqlite3
import stat
import sys
import tarfile
import tempfile
import time
import zlib
from collections import Counter
from collections.abc import Callable
from contextlib import closing, suppress
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import IO

from course.dbfile import SIDES
from course.labo.french_number import french_number

from .classroom.class_lock import RESTORE, RESTORING, class_lock, unfinished_restore
from .classroom.class_places import BACKED_UP, learner_ids
from .classroom.gradebook import (
    GradebookError,
    gradebook_counts,
    read_only,
    server_name,
    sqlite_copy,
)
from .classroom.ids import RosterError, normalize_id, quoted, read_roster, shown
from .classroom.paths import TOO_DEEP, TOO_LONG, CourseDirs, strange, tree
from .erase_learner import erase, temporary_name
from .french.french_args import FrenchParser
from .french.french_format import listed
from .french.system_reason import GradingError, french_message, french_reason
from .privacy.backup_files import (
    GRADEBOOK,
    RETENTION_DAYS,
    ROSTER,
    backups_in,
    dated_ahead,
    retention_days,
)
from .privacy.erasure_register import (
    KEY_NAME,
    REGISTER_NAME,
    Register,
    erasure_of,
    merge_register,
    registers_of,
    start_register,
    write_private,
)
from .privacy.erasure_register import reenrol as record_reenrolment
from .privacy.learner_places import Context, ErasureError, Setup

__all__ = ["BackupError", "backup", "main", "purge", "restore"]

HUB_DB = "hub/jupyterhub.sqlite"
MANIFEST = "manifest.json"
FORMAT = 1  # the manifest's "format": what this code writes and reads
REGISTER_PART = "effacements"  # the register of erased learners and its key, in a backup
REFUSED = "Sauvegarde refusée, rien n'a été écrit\u00a0: "
NOT_RESTORED = "Restauration refusée, rien n'a été écrit\u00a0: "
HALF_RESTORED = (  # a restore begun on an archive that then changed or went away
    "Ce cours est à moitié restauré et toute autre commande y est refusée\u00a0: remettez "
    "l'archive d'origine à sa place et relancez la même restauration, ou recommencez dans un "
    "clone neuf du cours."
)
DAMAGED = "archive abîmée ou tronquée"
AHEAD_WHY = "DATÉE DANS LE FUTUR (l'horloge d'une autre machine\u00a0? renommez-la)"
PARTIAL = ".partiel"  # a backup being written; renamed once whole
ABANDONED_SECONDS = 60  # a partial file unlocked and untouched this long: its backup was stopped


class BackupError(GradebookError):
    """A backup or restore that cannot be done, in one French sentence."""


def _french(counts: dict[str, int]) -> str:
    return f"{counts['students']} élève(s), {counts['grades']} note(s)"


def _held(archive: Path, damaged: dict[Path, str]) -> dict[str, int] | None:
    """The counts of the readable gradebook `archive` holds, read from it (SQLite's own check
    first), None if it holds none, an unreadable one, or is damaged (then in `damaged`, with the
    reason). Never the manifest's counts alone: an older version wrote counts for a gradebook
    damaged inside, and the purge would keep that backup and delete the sound ones."""
    try:
        members, _manifest = _read_archive(archive, keep=lambda name: name == GRADEBOOK)
    except BackupError as exc:
        damaged[archive] = str(exc)
        return None
    if GRADEBOOK not in members:
        return None
    with suppress(GradebookError):
        return _counts_of(members[GRADEBOOK][0])
    return None


def _counts_of(gradebook: bytes) -> dict[str, int]:
    """gradebook_counts of a gradebook held in an archive (SQLite reads files, not bytes)."""
    with tempfile.TemporaryDirectory(prefix="sauvegarde-") as work:
        copy = Path(work) / GRADEBOOK
        copy.write_bytes(gradebook)
        return gradebook_counts(copy)


def _check_gradebook(gradebook: Path, dest_dir: Path, damaged: dict[Path, str]) -> None:
    """Refuse, with the French reason, a backup of a gradebook that would lose grades; the
    damaged backups passed over go in `damaged`."""
    try:
        counts = gradebook_counts(gradebook)
    except GradebookError as exc:
        raise BackupError(
            f"{REFUSED}{exc} ; une sauvegarde sans lui ferait effacer les bonnes par la purge. "
            "Restaurez-le (make restauration) ou, si c'est voulu, confirmez : "
            "make sauvegarde CONFIRMER=1."
        ) from None
    # the newest whole one with a readable gradebook (one dated ahead too: refused, not skipped)
    for _, path in backups_in(dest_dir):
        if (before := _held(path, damaged)) is None:
            continue
        if counts["students"] < before["students"] or counts["grades"] < before["grades"]:
            raise BackupError(
                f"{REFUSED}le carnet de notes contient {_french(counts)}, moins que la dernière "
                f"sauvegarde {path.name} ({_french(before)}) ; si c'est voulu (un élève "
                "effacé…), confirmez : make sauvegarde CONFIRMER=1."
            )
        return


Located = tuple[CourseDirs, Path, dict[str, Path]]


def _dirs(grader_dir: Path | None) -> Located:
    """The class's folders, its gradebook file, and the backed-up places (class_places) by key:
    read once by a command (the configuration, nbgrader_config.py, is the teacher's program)."""
    ctx = Context(Setup(grader_dir=grader_dir))
    dirs = ctx.dirs
    if ctx.gradebook is None:
        raise BackupError(
            f"Le carnet de notes n'est pas un fichier SQLite ({server_name(dirs.db_url)})\u00a0: "
            "sauvegardez sa base avec ses propres outils (pg_dump…)."
        )
    return dirs, ctx.gradebook, {p.key: p.folder(dirs) for p in BACKED_UP}


def _read_stable(path: Path) -> bytes | None:
    """The bytes of `path`; a notebook being written (not whole JSON, written in the last
    seconds) is read again. None if it went away. A notebook long invalid is read once: ten
    thousand of them cost a backup 5.5 hours at 20 tries each."""
    for _ in range(20):
        try:
            data = path.read_bytes()
            if path.suffix == ".ipynb":
                json.loads(data)
            return data
        except FileNotFoundError:
            return None
        except RecursionError:  # whole, but nested deeper than json goes: a student's own
            return data
        except ValueError:
            with suppress(OSError):  # gone meanwhile: the next read says so
                if abs(time.time() - path.stat().st_mtime) > _WRITING_SECONDS:  # or dated ahead
                    return data
            time.sleep(0.1)
    return data


_WRITING_SECONDS = 5  # a notebook changed this recently may still be being written


def _complete_in(gradebook: Path) -> dict[tuple[str, str], dict[str, set[str]]]:
    """(student, assignment) pairs whose every notebook has all its grades in `gradebook`: the
    names of the cells graded, by notebook."""
    with closing(read_only(gradebook)) as con:
        try:
            cells = con.execute(
                "SELECT sa.student_id, a.name, n.name, c.name FROM grade g "
                "JOIN base_cell c ON c.id = g.cell_id "
                "JOIN submitted_notebook sn ON sn.id = g.notebook_id "
                "JOIN notebook n ON n.id = sn.notebook_id "
                "JOIN submitted_assignment sa ON sa.id = sn.assignment_id "
                "JOIN assignment a ON a.id = sa.assignment_id"
            ).fetchall()
            counts = con.execute(
                "SELECT sa.student_id, a.name, n.name, "
                " (SELECT count(*) FROM base_cell c WHERE c.notebook_id = n.id"
                "  AND (c.id IN (SELECT id FROM grade_cells)"
                " OR c.id IN (SELECT id FROM task_cells))),"
                " (SELECT count(*) FROM submitted_notebook sn JOIN grade g ON g.notebook_id = sn.id"
                "  WHERE sn.assignment_id = sa.id AND sn.notebook_id = n.id) "
                "FROM submitted_assignment sa JOIN assignment a ON a.id = sa.assignment_id "
                "JOIN notebook n ON n.assignment_id = a.id"
            ).fetchall()
        except sqlite3.DatabaseError:
            return {}  # not an nbgrader gradebook: nothing vouched
    graded: dict[tuple[str, str, str], set[str]] = {}
    for student, assignment, notebook, cell in cells:
        graded.setdefault((student, assignment, notebook), set()).add(cell)
    pairs: dict[tuple[str, str], dict[str, set[str]]] = {}
    broken: set[tuple[str, str]] = set()
    for student, assignment, notebook, expected, found in counts:
        key = (student, assignment)
        pairs.setdefault(key, {})[notebook] = graded.get((*key, notebook), set())
        if found != expected:
            broken.add(key)
    return {key: notebooks for key, notebooks in pairs.items() if key not in broken}


def _take_graded(folder: Path, since_ns: int) -> list[tuple[Path, bytes, float]] | None:
    """Every file under `folder`, read, if each was last written before `since_ns` and did not
    change while read (a notebook must be whole JSON), and no folder of it was passed over; None
    otherwise. Links are never followed (the backup names them)."""
    taken = []
    passed: list[tuple[Path, str]] = []
    entries = tree(folder, 3, passed)  # grader/autograded/<id>/<assignment>
    if passed:
        return None
    for file in (path for _, path, mode in entries if mode == stat.S_IFREG):
        try:
            before = file.stat().st_mtime_ns
            data = file.read_bytes()
            after = file.stat().st_mtime_ns
            if file.suffix == ".ipynb":
                json.loads(data)
        except (OSError, ValueError, RecursionError):
            return None
        if before >= since_ns or after != before:
            return None
        taken.append((file, data, after / 1e9))
    return taken or None


def _vouched(taken: list, top: Path, notebooks: dict[str, set[str]] | None) -> bool:
    """Whether the graded copy `top` holds every notebook of the gradebook copy (`notebooks`,
    None if not all graded there), and every graded cell of each has its grade there."""
    copies = {f: d for f, d, _ in taken if f.parent == top and f.suffix == ".ipynb"}
    if notebooks is None or not {f"{nb}.ipynb" for nb in notebooks} <= {f.name for f in copies}:
        return False
    for file, data in copies.items():
        try:  # the grade ids of its graded cells
            cells = json.loads(data).get("cells", [])
            metas = [c.get("metadata", {}).get("nbgrader", {}) for c in cells]
            graded = {str(m["grade_id"]) for m in metas if m.get("grade") or m.get("task")}
        except (ValueError, AttributeError, KeyError, TypeError, RecursionError):
            return False  # not a graded notebook
        if not graded <= notebooks.get(file.stem, set()):
            return False
    return True


def backup(
    dest_dir: Path | None = None,
    roster: Path | None = None,
    hub_db: Path | None = None,
    grader_dir: Path | None = None,
    confirm: bool = False,
    damaged: dict[Path, str] | None = None,
    not_saved: list[tuple[str, str]] | None = None,
    located: Located | None = None,
) -> tuple[Path, dict[str, int], list[str]]:
    """Write one backup archive; (its path, files per part, graded copies left out). Refused
    (BackupError) when it would hold less than the last one, unless `confirm`. What it saves
    nothing of goes in `not_saved` (path in the backup, why): a link, a fifo, a folder too deep
    or unreadable, named; the rest of the class is saved (one student's trap folder refused
    every backup of the class). `located`: `_dirs(grader_dir)`, when the caller has it."""
    dirs, gradebook, folders = located or _dirs(grader_dir)
    if why := unfinished_restore(dirs.grader_dir):  # it would back up an erased learner again
        raise BackupError(f"{REFUSED}{why}")
    dest_dir = dest_dir or dirs.backups
    if not confirm:
        _check_gradebook(gradebook, dest_dir, {} if damaged is None else damaged)
    # one key for the class and this folder from the first backup on: an erasure recorded beside
    # the gradebook is then merged into the folder's register by the next backup
    start_register(Register(gradebook.parent), [Register(dest_dir)])
    dest_dir.mkdir(parents=True, exist_ok=True)
    os.chmod(dest_dir, 0o700)  # names, e-mails, grades: the instructor's eyes only
    now = datetime.now(UTC)
    path, fd = _new_archive(dest_dir, now.strftime("%Y%m%d-%H%M%S"))
    tmp = path.with_name(path.name + PARTIAL)
    writing = os.dup(fd)  # its lock (``_new_archive``) outlives the file object, until renamed
    files: dict[str, str] = {}
    left_out: list[str] = []
    unsaved = [] if not_saved is None else not_saved
    try:
        with (
            os.fdopen(fd, "wb") as raw,
            tarfile.open(fileobj=raw, mode="w:gz") as tar,
            tempfile.TemporaryDirectory(prefix="sauvegarde-") as work,
        ):

            def add(name: str, data: bytes, mtime: float | None = None) -> None:
                info = tarfile.TarInfo(name)
                info.size = len(data)
                info.mtime = int(mtime if mtime is not None else time.time())
                info.mode = 0o600
                tar.addfile(info, io.BytesIO(data))
                files[name] = hashlib.sha256(data).hexdigest()

            # first the gradebook; every graded copy is then checked against this snapshot
            snapshot = Path(work) / GRADEBOOK
            # a file's mtime comes from a coarse clock (a tick behind): one second of margin
            since_ns = time.time_ns() - 1_000_000_000
            if gradebook.is_file():
                try:
                    sqlite_copy(gradebook, snapshot)
                except sqlite3.DatabaseError:  # confirmed: not a database, not in the backup
                    snapshot.unlink(missing_ok=True)
            complete = _complete_in(snapshot) if snapshot.is_file() else {}
            kept: set[tuple[str, str]] = set()  # graded copies taken
            for part, folder in folders.items():
                tops: set[tuple[str, str]] = set()
                passed: list[tuple[Path, str]] = []
                for rel, file, mode in tree(folder, passed=passed):
                    parts = rel.split("/")
                    if mode not in (stat.S_IFDIR, stat.S_IFREG):  # the walk's lstat says it
                        unsaved.append((f"{part}/{rel}", strange(file) or "illisible"))
                    elif part in ("autograded", "feedback") and len(parts) > 2:
                        tops.add((parts[0], parts[1]))  # taken whole below, or left out
                    elif mode == stat.S_IFREG:
                        try:
                            if (data := _read_stable(file)) is not None:
                                add(f"{part}/{rel}", data, file.stat().st_mtime)
                        except OSError as exc:  # a student's mode 000 kept by unzip or cp -a
                            unsaved.append((f"{part}/{rel}", f"illisible ({french_reason(exc)})"))
                for skipped, why in passed:
                    where = skipped.relative_to(folder).as_posix()
                    unsaved.append((f"{part}/{where}", f"{why}, non parcouru"))
                for top in sorted(tops):
                    where = folder / top[0] / top[1]
                    taken = _take_graded(where, since_ns)
                    if part == "autograded":
                        whole = taken is not None and _vouched(taken, where, complete.get(top))
                    else:  # feedback is made from the graded copy: kept with it only
                        whole = top in kept
                    if taken is None or not whole:
                        left_out.append(f"{part}/{top[0]}/{top[1]}")
                        continue
                    kept.add(top)
                    for file, data, mtime in taken:
                        add(f"{part}/{file.relative_to(folder).as_posix()}", data, mtime)
            if roster is not None and roster.is_file():
                add(ROSTER, roster.read_bytes(), roster.stat().st_mtime)
            if hub_db is not None:
                if not hub_db.is_file():
                    raise BackupError(f"Base SQLite introuvable\u00a0: {hub_db}.")
                sqlite_copy(hub_db, Path(work) / "hub.sqlite")
                add(HUB_DB, (Path(work) / "hub.sqlite").read_bytes())
            for name in (REGISTER_NAME, KEY_NAME):
                if (gradebook.parent / name).is_file():
                    add(f"{REGISTER_PART}/{name}", (gradebook.parent / name).read_bytes())
            held = None
            if snapshot.is_file():
                add(GRADEBOOK, snapshot.read_bytes())
                with suppress(GradebookError):  # confirmed: an unreadable gradebook kept as it was
                    held = gradebook_counts(snapshot)
            counts = Counter(name.partition("/")[0] for name in files)  # files per member or part
            manifest = {
                "format": FORMAT,
                "gradebook": held,
                "created": now.isoformat(),
                "files": files,
            }
            manifest["left_out"] = left_out
            manifest["not_saved"] = [[name, why] for name, why in unsaved]
            add(MANIFEST, json.dumps(manifest, indent=1, sort_keys=True).encode())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    finally:
        os.close(writing)
    # beside the backups too: a restore into a fresh clone still knows who was erased, and
    # knows it checked a register (an empty one when nobody was ever erased)
    merge_register(Register(gradebook.parent), Register(dest_dir))
    start_register(Register(dest_dir), [Register(gradebook.parent)])
    return path, counts, left_out


def _new_archive(dest_dir: Path, stamp: str) -> tuple[Path, int]:
    """The name of a new backup and its open partial file, locked (a purge deletes only a partial
    file nobody writes): ``sauvegarde-<stamp>.tar.gz``, or ``…-1``, ``…-2`` when another backup
    (a crontab's, started in the same second) has it."""
    k = 0
    while True:
        path = dest_dir / (f"sauvegarde-{stamp}-{k}.tar.gz" if k else f"sauvegarde-{stamp}.tar.gz")
        if not path.exists():
            try:
                flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL
                fd = os.open(path.with_name(path.name + PARTIAL), flags, 0o600)
            except FileExistsError:
                pass
            else:
                fcntl.flock(fd, fcntl.LOCK_EX)
                return path, fd
        k += 1


def _read_archive(
    archive: Path, keep: Callable[[str], bool] = lambda name: True
) -> tuple[dict[str, tuple[bytes, int]], dict]:
    """The members of a backup that `keep` names, and its manifest, once every member has been
    checked against the manifest, read as a stream (an archive can hold far more than memory);
    BackupError, naming the archive, if any byte of it is damaged."""
    members: dict[str, tuple[bytes, int]] = {}
    digests: dict[str, str] = {}
    try:
        with gzip.open(archive, "rb") as raw, tarfile.open(fileobj=raw, mode="r|") as tar:
            for info in tar:
                path = Path(info.name)
                if not info.isfile() or path.is_absolute() or ".." in path.parts or not path.parts:
                    raise BackupError(
                        f"{archive.name}\u00a0: membre «\u00a0{info.name}\u00a0» refusé (pas "
                        "un fichier simple, ou chemin hors de la sauvegarde)."
                    )
                digest, chunks = hashlib.sha256(), []
                source = tar.extractfile(info)
                while chunk := source.read(1 << 20):
                    digest.update(chunk)
                    if info.name == MANIFEST or keep(info.name):
                        chunks.append(chunk)
                digests[info.name] = digest.hexdigest()
                if info.name == MANIFEST or keep(info.name):
                    members[info.name] = (b"".join(chunks), info.mtime)
            while raw.read(1 << 20):  # to its end: gzip's checksum vouches for every byte
                pass
    except OSError as exc:
        reason = french_reason(exc) if exc.errno is not None else DAMAGED
        raise BackupError(f"Sauvegarde illisible\u00a0: {archive} ({reason}).") from None
    except (tarfile.TarError, EOFError, zlib.error):
        raise BackupError(f"Sauvegarde illisible\u00a0: {archive} ({DAMAGED}).") from None
    if MANIFEST not in members:
        raise BackupError(f"{archive.name} n'est pas une sauvegarde du cours (pas de {MANIFEST}).")
    try:
        manifest = json.loads(members.pop(MANIFEST)[0])
        expected = {str(k): str(v) for k, v in manifest["files"].items()}
    except (ValueError, KeyError, TypeError, AttributeError):
        raise BackupError(f"{archive.name}\u00a0: manifeste illisible ({MANIFEST}).") from None
    if manifest.get("format") != FORMAT:  # a later course's: its parts may mean other things
        raise BackupError(
            f"{archive.name}\u00a0: sauvegarde au format {shown(str(manifest.get('format')))}, "
            f"cette version du cours lit le format {FORMAT}\u00a0: restaurez-la avec la version "
            "du cours qui l'a faite."
        )
    del digests[MANIFEST]
    if set(expected) != set(digests):
        raise BackupError(f"{archive.name}\u00a0: fichiers manquants ou en trop (manifeste).")
    for name, digest in digests.items():
        if digest != expected[name]:
            raise BackupError(
                f"{archive.name}\u00a0: «\u00a0{name}\u00a0» abîmé (empreinte différente)."
            )
    return members, manifest


def _taken_at(archive: Path, manifest: dict) -> datetime | None:
    """When the backup was taken: its manifest's time, else the UTC time in its name."""
    with suppress(KeyError, TypeError, ValueError):
        return datetime.fromisoformat(str(manifest["created"])).astimezone(UTC)
    return next((when for when, path in backups_in(archive.parent) if path == archive), None)


def _no_register(archive: Path, grader: Path) -> str:
    return (
        f"aucun registre des effacements trouvé ({REGISTER_NAME} et {KEY_NAME}, ni dans {grader}, "
        f"ni à côté de la sauvegarde, dans {archive.parent})\u00a0: un élève effacé à sa "
        "demande (RGPD) après cette sauvegarde reviendrait sans que rien ne le signale"
    )


def restore(
    archive: Path,
    roster: Path | None = None,
    hub_db: Path | None = None,
    grader_dir: Path | None = None,
    reenrol: set[str] | None = None,
    register: Path | None = None,
    confirm: bool = False,
    told: list[str] | None = None,
) -> tuple[dict[str, int], ErasedOnRestore]:
    """Restore `archive` into a course with no gradebook, submissions or roster yet; a learner
    the erasure register holds (or re-enrolled after the backup) is erased again, unless `reenrol`
    names them. Without a register (beside the gradebook or the archive, or in `register`),
    refused unless `confirm`: then ``unchecked`` says so. ``RESTORING`` names the archive from
    the first file written to the last erasure: a restore stopped between them is finished by
    the same command run again (what it wrote is its own), and refuses every other command.
    What the teacher must also know goes in `told`, in French: what the backup had not saved
    (listed in rapport/restauration.log, written before the re-erasure cleans it), the hub's
    database it holds and was not asked to restore."""
    dirs, gradebook, folders = _dirs(grader_dir)
    marker = dirs.grader_dir / RESTORING
    begun = marker.read_text(encoding="utf-8").strip() if marker.is_file() else None
    if begun is not None and begun != str(archive.resolve()):
        raise BackupError(f"{NOT_RESTORED}{unfinished_restore(dirs.grader_dir)}")
    # read whole once, every byte checked, only its small parts kept: a class's backup can hold
    # more than memory (3 x 200 MB took 892 MB); the files are streamed to their places below
    small = {GRADEBOOK, *(f"{REGISTER_PART}/{name}" for name in (REGISTER_NAME, KEY_NAME))}
    try:
        members, manifest = _read_archive(archive, keep=small.__contains__)
    except BackupError as exc:
        if begun is None:
            raise
        raise BackupError(f"{exc} {HALF_RESTORED}") from None
    told = [] if told is None else told
    if begun is None and GRADEBOOK in members:  # a damaged gradebook is no class to restore
        try:
            _counts_of(members[GRADEBOOK][0])
        except GradebookError as exc:
            raise BackupError(
                f"{NOT_RESTORED}{archive.name} contient un carnet de notes illisible "
                f"({exc.reason})\u00a0; restaurez une sauvegarde plus ancienne (ses autres "
                "fichiers se lisent avec tar)."
            ) from None
    # REGISTER_PART is merged below: an erasure recorded here since the backup stays
    fixed = {GRADEBOOK: gradebook, ROSTER: roster, HUB_DB: hub_db}
    places: dict[str, tuple[Path, tuple[str, ...]]] = {}  # (a folder of the class, names below)
    expected = {str(k): str(v) for k, v in manifest["files"].items()}  # every member's digest
    for name in expected:
        part, _, rel = name.partition("/")
        if part in folders:
            places[name] = (folders[part], tuple(rel.split("/")))
        elif (target := fixed.get(name)) is not None:
            places[name] = (target.parent, (target.name,))
    occupied = [str(p) for p in fixed.values() if p is not None and p.exists()]
    occupied += [str(f) for f in folders.values() if f.is_dir() and any(f.iterdir())]
    if occupied and begun is None:
        raise BackupError(
            f"{NOT_RESTORED}ces données existent déjà et ne sont jamais écrasées "
            f"({', '.join(occupied)})\u00a0; restaurez dans un clone neuf ou déplacez-les."
        )
    beside, here = Register(archive.parent), Register(gradebook.parent)
    named = Register(register) if register is not None else None
    if named is not None and not named.found():
        raise BackupError(
            f"{NOT_RESTORED}pas de registre des effacements lisible dans {register} "
            f"({REGISTER_NAME} et {KEY_NAME})."
        )
    unchecked = not any(r.found() for r in (beside, here, named) if r)
    if unchecked and not confirm:
        raise BackupError(
            f"{NOT_RESTORED}{_no_register(archive, gradebook.parent)}. "
            "Donnez le dossier du registre (make restauration … REGISTRE=dossier) ou, si vous "
            "savez qu'aucun élève n'a été effacé depuis cette sauvegarde, confirmez\u00a0: "
            "make restauration … CONFIRMER=1."
        )
    with tempfile.TemporaryDirectory(prefix="restauration-") as work:
        for name in (REGISTER_NAME, KEY_NAME):
            if f"{REGISTER_PART}/{name}" in members:
                write_private(Path(work) / name, members[f"{REGISTER_PART}/{name}"][0])
        merge_register(Register(Path(work)), here)
    for source in (r for r in (beside, named) if r is not None):
        merge_register(source, here)
    counts = Counter(name.partition("/")[0] for name in places)
    write_private(marker, f"{archive.resolve()}\n".encode())  # before the first file
    restored = {(root, names[:-1], names[-1]) for root, names in places.values()}
    written: set[str] = set()
    try:
        with gzip.open(archive, "rb") as raw, tarfile.open(fileobj=raw, mode="r|") as tar:
            for info in tar:
                if (place := places.get(info.name)) is None:
                    continue
                source = tar.extractfile(info)
                if _restore_file(
                    *place, source, info.mtime, expected[info.name], begun is not None
                ):
                    written.add(info.name)
                    continue
                raise BackupError(
                    f"{archive.name} a changé depuis sa vérification («\u00a0{info.name}\u00a0» "
                    f"différent). {HALF_RESTORED}"
                )
    except (tarfile.TarError, EOFError, zlib.error):
        raise BackupError(
            f"Sauvegarde illisible\u00a0: {archive} ({DAMAGED}). {HALF_RESTORED}"
        ) from None
    # every file of the manifest is there now (an archive swapped meanwhile can lack one)
    if missing := [name for name in places if name not in written]:
        raise BackupError(
            f"{archive.name} a changé depuis sa vérification («\u00a0{missing[0]}\u00a0» "
            f"absent). {HALF_RESTORED}"
        )
    if begun is not None:
        _remove_left(places, restored)
    if HUB_DB in expected and hub_db is None:
        told.append(
            "⚠ Cette sauvegarde contient aussi la base du hub, non restaurée\u00a0: donnez son "
            "chemin pour la restaurer (make restauration … HUB_DB=/srv/jupyterhub/"
            "jupyterhub.sqlite)."
        )
    unsaved = manifest.get("not_saved")
    pairs = (
        [i for i in unsaved if isinstance(i, list) and len(i) == 2]
        if isinstance(unsaved, list)
        else []
    )
    if pairs:  # written before the re-erasure: an erased learner's names are cleaned from it
        log = dirs.log_file("restauration")
        log.with_name(temporary_name(log.name)).unlink(missing_ok=True)  # a killed re-erasure's
        log.write_text("".join(shown(f"{name} ({why})") + "\n" for name, why in pairs), "utf-8")
        told.append(
            f"⚠ Cette sauvegarde ne contient pas {len(pairs)} élément(s), non sauvegardés quand "
            f"elle a été écrite (absents de la classe restaurée)\u00a0: liste dans {log}."
        )
    if roster is not None and not roster.is_file():
        roster = None
    taken = _taken_at(archive, manifest)
    hub_db = hub_db if hub_db is not None and hub_db.is_file() else None
    done = _erase_restored(dirs, gradebook, roster, hub_db, archive, reenrol or set(), taken)
    marker.unlink()  # every erased learner erased again (or their failure said): finished
    done.unchecked = _no_register(archive, gradebook.parent) if unchecked else None
    return counts, done


_TEMPORARY = re.compile(r"\.restauration-[0-9a-f]{8}")  # a file being restored, in its folder


def _restore_file(
    root: Path,
    names: tuple[str, ...],
    source: IO[bytes],
    mtime: float,
    digest: str,
    resuming: bool,
) -> bool:
    """Write `source` at `root`/`names`…, folder by folder through file descriptors: a student's
    path may be longer than the system takes whole (PATH_MAX) below the restored class, whatever
    it was below the saved one. The file is written under a short name of its own, new in its
    folder (« .<name>.restauration » was past NAME_MAX for a 243-byte name, and overwrote a
    student's file of that name), then renamed if its SHA-256 is `digest`; False if not (then
    nothing is left of it). `resuming`: a file already there with that digest is left as it is
    (another one, written again)."""
    fd = _folder_fd(root, names[:-1])
    try:
        name = names[-1]
        if resuming and _digest_at(fd, name) == digest:
            return True  # written whole by the restore this one finishes
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
        while True:
            tmp = f".restauration-{secrets.token_hex(4)}"
            with suppress(FileExistsError):
                out = os.open(tmp, flags, 0o666, dir_fd=fd)  # the umask decides, as for any file
                break
        try:
            found = hashlib.sha256()
            with os.fdopen(out, "wb") as fh:
                while chunk := source.read(1 << 20):
                    found.update(chunk)
                    fh.write(chunk)
                fh.flush()
                os.fsync(fh.fileno())  # whole on disk before its name says so (a power cut)
            if found.hexdigest() != digest:
                os.unlink(tmp, dir_fd=fd)
                return False
            os.utime(tmp, (mtime, mtime), dir_fd=fd)
            os.replace(tmp, name, src_dir_fd=fd, dst_dir_fd=fd)
        except BaseException:
            with suppress(OSError):
                os.unlink(tmp, dir_fd=fd)
            raise
        return True
    finally:
        os.close(fd)


def _digest_at(fd: int, name: str) -> str | None:
    """The SHA-256 of the plain file `name` in the folder `fd`, None if there is none."""
    try:
        file = os.open(name, os.O_RDONLY | os.O_NOFOLLOW, dir_fd=fd)
    except OSError:
        return None
    with os.fdopen(file, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            return None
        found = hashlib.sha256()
        while chunk := fh.read(1 << 20):
            found.update(chunk)
    return found.hexdigest()


def _folder_fd(root: Path, names: tuple[str, ...]) -> int:
    """An open descriptor of `root`/`names`…, each folder made if need be, never through a
    link."""
    root.mkdir(parents=True, exist_ok=True)
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for part in names:
            with suppress(FileExistsError):
                os.mkdir(part, dir_fd=fd)
            inner = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            os.close(fd)
            fd = inner
    except BaseException:
        os.close(fd)
        raise
    return fd


def _remove_left(places: dict[str, tuple[Path, tuple[str, ...]]], restored: set[tuple]) -> None:
    """Remove the temporary files a restore stopped outright (kill -9) left beside the files it
    was writing, or its re-erasure beside those it was rewriting (found again, with the control
    in them, then replaced by the new erasure's own: its proof failed), and the journals SQLite
    keeps beside a database (a rollback journal of the killed run, played onto the file written
    again from the archive at its first opening, brought back a row as that run had it); never
    a file of the archive."""
    erasing = {
        (root, names, left)
        for root, names, name in restored
        for left in (temporary_name(name), *(name + side for side in SIDES))
    }
    for root, names in {(root, names[:-1]) for root, names in places.values()}:
        fd = _folder_fd(root, names)
        try:
            for left in os.listdir(fd):
                here = (root, names, left)
                if here in restored or not (_TEMPORARY.fullmatch(left) or here in erasing):
                    continue
                with suppress(OSError):  # only a plain file: a student's folder of that name
                    if stat.S_ISREG(os.stat(left, dir_fd=fd, follow_symlinks=False).st_mode):
                        os.unlink(left, dir_fd=fd)
        finally:
            os.close(fd)


@dataclass
class ErasedOnRestore:
    """The erased learners a restored backup held: erased again, or enrolled again; and, when
    no register was found, why nothing could be checked."""

    erased: list[str]
    reenrolled: list[str]
    failures: list[str]
    unchecked: str | None = None


def _erase_restored(
    dirs: CourseDirs,
    gradebook: Path,
    roster: Path | None,
    hub_db: Path | None,
    archive: Path,
    reenrol: set[str],
    taken: datetime | None,
) -> ErasedOnRestore:
    """Erase again, with the erasure's own tool and proof, each learner of the restored class that
    the register records as erased, or re-enrolled after the backup was `taken` (its copy of
    them predates their erasure); `reenrol` names those the teacher enrols again."""
    names: list[str] = []
    with suppress(RosterError):  # the restore has already checked every byte; folders name them
        names = [s.id for s in read_roster(roster)] if roster is not None else []
    registers = registers_of(gradebook.parent, archive.parent)
    wanted = {normalize_id(x) for x in reenrol}
    done = ErasedOnRestore([], [], [])
    # redact: as the erasure itself had to, their mentions in others' work too
    setup = Setup(dirs.grader_dir, roster, backups=archive.parent, redact=True, hub_db=hub_db)
    for sid in sorted(learner_ids(dirs, names)):
        erasure = erasure_of(sid, registers)
        if erasure is None:
            continue
        if not erasure.active and taken is not None and taken > erasure.reenrolled:
            continue  # backed up after their re-enrolment: what they did since
        if sid in wanted:
            record_reenrolment(sid, registers)
            done.reenrolled.append(sid)
            continue
        try:
            # re-enrolled since: the register keeps its re-enrolment, this is not a new erasure
            result = erase(sid, setup, confirm=True, record=erasure.active, restoring=True)
        except ErasureError as exc:
            done.failures.append(f"{sid}\u00a0: {exc}")
            continue
        done.erased.append(sid)
        done.failures += [f"{sid}\u00a0: {f}" for f in result.failures]
    return done


def purge(
    folder: Path, keep: int | None, keep_days: float, written: Path | None = None
) -> tuple[list[Path], list[tuple[Path, str]], list[tuple[Path, str]]]:
    """Delete the backups older than `keep_days` days or past the `keep` newest, except the newest
    whole one with a gradebook (a restore needs it, whatever its age) and the damaged ones (never
    deleted unasked); (deleted, kept with the why, damaged with the reason). An archive is read
    whole, as a stream, only when its fate depends on it: from the newest until the one with a
    gradebook, and each one about to be deleted (a class's backup can hold gigabytes). One purge
    of a folder at a time (``make purge-sauvegardes`` beside ``make sauvegarde``'s): the second
    waits, then reads what the first left. The backup just `written` is never deleted (a name
    dated a few minutes ahead would otherwise rank before it)."""
    if not folder.is_dir():
        return [], [], []
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        return _purge(folder, keep, keep_days, written)
    finally:
        os.close(fd)


def _purge(
    folder: Path, keep: int | None, keep_days: float, written: Path | None
) -> tuple[list[Path], list[tuple[Path, str]], list[tuple[Path, str]]]:
    now = datetime.now(UTC)
    named = backups_in(folder)
    ahead = [path for when, path in named if dated_ahead(when)]  # kept, never ranked
    found = [(when, path) for when, path in named if path not in ahead]
    damaged: dict[Path, str] = {}
    read: set[Path] = set()

    def held(path: Path) -> dict[str, int] | None:
        read.add(path)
        return _held(path, damaged)

    safe = next((path for _, path in found if held(path) is not None), None)
    rule = f"moins de {french_number(keep_days)} jours"
    if keep is not None:
        rule += f" et une des {keep} plus récentes"
    deleted = _abandoned_partials(folder)
    kept = [(path, f"{AHEAD_WHY}, jamais effacée ni prise pour la plus récente") for path in ahead]
    for rank, (when, path) in enumerate(found):
        expired = now - when > timedelta(days=keep_days) or (keep is not None and rank >= keep)
        if expired and path not in read:
            held(path)  # checked whole before it is deleted
        if path == safe:
            why = "la plus récente qui contient un carnet de notes, jamais effacée"
            if expired:
                why += " (elle devrait sinon l'être\u00a0: faites une sauvegarde neuve)"
            kept.append((path, why))
        elif path in damaged:
            kept.append((path, "ABÎMÉE, jamais effacée par la purge (voir ci-dessous)"))
        elif path == written:
            kept.append((path, "écrite à l'instant"))
        elif expired:
            path.unlink()
            deleted.append(path)
        else:
            kept.append((path, rule))
    return deleted, kept, list(damaged.items())


def _abandoned_partials(folder: Path) -> list[Path]:
    """Delete, and name, the partial files of backups stopped for good (``kill -9``, the machine
    off): a learner's data kept past any retention, never a backup. One still being written is
    locked by its writer (``backup``) and left alone."""
    deleted = []
    for path in sorted(folder.glob(f"sauvegarde-*.tar.gz{PARTIAL}")):
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
        except OSError:  # gone meanwhile (its backup finished), or not a plain file
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            # a minute untouched too: made an instant before its writer locks it
            if time.time() - os.fstat(fd).st_mtime > ABANDONED_SECONDS:
                path.unlink(missing_ok=True)
                deleted.append(path)
        except BlockingIOError:
            pass
        finally:
            os.close(fd)
    return deleted


def _summary(counts: dict[str, int]) -> str:
    parts = ["carnet de notes" if counts.get(GRADEBOOK) else "SANS carnet de notes"]
    # « 3 fichier(s) d'archives reçues », « 2 fichier(s) de rendus »
    parts += [
        f"{counts.get(p.key, 0)} fichier(s) " + ("d'" if p.label[0] in "aeiou" else "de ") + p.label
        for p in BACKED_UP
    ]
    extra = {ROSTER: "liste des élèves", "hub": "base du hub"}
    return ", ".join(parts + [label for key, label in extra.items() if counts.get(key)])


def _say_erased(erased: ErasedOnRestore) -> int:
    """What the restore did with the erased learners it held, in French; the exit status."""
    if erased.unchecked:
        print(
            "⚠ Restauré sans vérifier les effacements, à votre demande (CONFIRMER=1)\u00a0: "
            f"{erased.unchecked}. Si vous retrouvez le registre, remettez-le dans grader/ et "
            "effacez de nouveau chaque élève effacé depuis (make oublier-eleve ID=… "
            "CONFIRMER=1).",
            file=sys.stderr,
        )
    for sid in erased.reenrolled:
        print(f"Réinscrit(e) à votre demande, restauré(e) avec la classe\u00a0: {quoted(sid)}.")
    if erased.erased:
        names = ", ".join(quoted(s) for s in erased.erased)
        print(
            f"✘ {len(erased.erased)} élève(s) effacé(s) à sa demande (RGPD) était(ent) dans "
            f"cette sauvegarde, effacé(s) de nouveau de la classe restaurée\u00a0: {names}. "
            "Pour une réinscription voulue\u00a0: make restauration … "
            f"REINSCRIRE={erased.erased[0]} (dans un clone neuf).",
            file=sys.stderr,
        )
    for failure in erased.failures:
        print(f"✘ effacement incomplet\u00a0: {failure}", file=sys.stderr)
    return 1 if erased.erased or erased.failures else 0


_FAILED = (TOO_DEEP, TOO_LONG, "illisible")  # what holds data the backup could not read


def _say_unsaved(unsaved: list[tuple[str, str]], report: Path) -> None:
    """Name what the backup holds nothing of: links and fifos are never followed nor read (skipped),
    a folder too deep or unreadable is data not saved (failed: exit status 1). The whole list
    goes to rapport/sauvegarde.log (a hostile submission can hold thousands)."""
    items = [shown(f"{name} ({why})") for name, why in unsaved]
    log: Path | None = report / "sauvegarde.log"
    if not items:
        with suppress(OSError):
            log.unlink(missing_ok=True)  # an earlier backup's list, no longer true
        return
    try:
        log.parent.mkdir(exist_ok=True)
        log.write_text("\n".join(items) + "\n", encoding="utf-8")
    except OSError as exc:  # rapport/ not writable: the backup is written, the list shown whole
        print(
            f"⚠ {log} non écrit ({french_reason(exc)})\u00a0: la liste entière suit.",
            file=sys.stderr,
        )
        log = None
    header = (
        f"✘ Non sauvegardé(s), {len(items)} (jamais suivis ni lus\u00a0; un dossier trop profond "
        "ou illisible\u00a0: déplacez-le hors du cours, puis relancez)\u00a0:"
    )
    print(*listed(header, items, log), sep="\n", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    parser = FrenchParser(
        prog="python -m grading.backup",
        description="Sauvegarder, restaurer, purger les données de la classe (carnet de notes, "
        "rendus, copies notées, retours, archives reçues, liste des élèves, base du hub).",
    )
    sub = parser.add_subparsers(
        dest="command", metavar="COMMANDE", required=True, help="sauvegarder, restaurer ou purger"
    )
    save = sub.add_parser("sauvegarder", help="écrire une sauvegarde")
    save.add_argument(
        "--confirmer",
        action="store_true",
        help="sauvegarder même un carnet de notes absent, vide, illisible ou moins rempli",
    )
    rest = sub.add_parser("restaurer", help="restaurer une sauvegarde dans un cours vide")
    rest.add_argument(
        "archive", type=Path, metavar="ARCHIVE", help="l'archive .tar.gz de la sauvegarde"
    )
    purge_p = sub.add_parser("purger", help="effacer les sauvegardes trop anciennes")
    for p in (save, purge_p):
        p.add_argument("--dossier", type=Path, help="défaut\u00a0: grader/sauvegardes")
        p.add_argument("--garder", type=int, metavar="N", help="garder au plus les N plus récentes")
        days_help = f"garder J jours (défaut\u00a0: {RETENTION_DAYS:g})"
        p.add_argument("--garder-jours", type=retention_days, metavar="J", help=days_help)
    rest.add_argument(
        "--reinscrire",
        action="append",
        default=[],
        metavar="IDENTIFIANT",
        help="restaurer aussi un élève effacé (sa réinscription est ajoutée au registre des "
        "effacements, qui garde son effacement)",
    )
    rest.add_argument(
        "--registre",
        type=Path,
        metavar="DOSSIER",
        help=f"le dossier du registre des effacements ({REGISTER_NAME}, {KEY_NAME}) s'il n'est "
        "ni dans grader/ ni à côté de la sauvegarde",
    )
    rest.add_argument(
        "--confirmer",
        action="store_true",
        help="restaurer même sans registre des effacements (un élève effacé pourrait revenir)",
    )
    for p in (save, rest):
        p.add_argument("--eleves", type=Path, metavar="CSV", help="la liste des élèves (CSV)")
        p.add_argument("--hub-db", type=Path, metavar="FICHIER", help="la base SQLite du hub")
    for p in (save, rest, purge_p):
        p.add_grader_dir()
    args = parser.parse_args(argv)
    try:
        if args.command == "restaurer":
            told: list[str] = []
            with class_lock(args.grader_dir, RESTORE):
                counts, erased = restore(
                    args.archive,
                    args.eleves,
                    args.hub_db,
                    args.grader_dir,
                    set(args.reinscrire),
                    args.registre,
                    args.confirmer,
                    told,
                )
            print(f"Restauré depuis {args.archive.name}\u00a0: {_summary(counts)}.")
            if told:
                print(*told, sep="\n", file=sys.stderr)
            return _say_erased(erased)
        # a purge with its folder given reads no class (its gradebook may be on a server)
        saving = args.command == "sauvegarder"
        if args.dossier and not args.dossier.is_dir():
            # a key not mounted, a misspelt name: a backup would go to the local disk, under
            # the mount point, unseen; a purge of nothing would say « 0 » and succeed
            raise BackupError(
                f"Aucun dossier de sauvegardes {args.dossier}\u00a0: rien n'a été "
                f"{'sauvegardé' if saving else 'purgé'}. Vérifiez DOSSIER=… (le disque est-il "
                "branché\u00a0?)\u00a0; un nouveau dossier se crée d'abord (mkdir)."
            )
        located = _dirs(args.grader_dir) if saving or not args.dossier else None
        folder = args.dossier or located[0].backups
        passed: dict[Path, str] = {}  # damaged backups the check passed over
        unsaved: list[tuple[str, str]] = []
        if args.command == "sauvegarder":
            path, counts, left_out = backup(
                folder,
                args.eleves,
                args.hub_db,
                args.grader_dir,
                args.confirmer,
                passed,
                unsaved,
                located,
            )
            print(f"Sauvegarde écrite\u00a0: {path} ({_summary(counts)}).")
            if left_out:
                print(
                    "Laissées de côté (notées après la copie du carnet de notes, refaites par "
                    f"le prochain make grade, puis make feedback)\u00a0: {', '.join(left_out)}."
                )
            _say_unsaved(unsaved, located[0].report)
        if args.garder is not None and args.garder < 1:
            raise BackupError("GARDER doit valoir au moins 1 (la sauvegarde la plus récente).")
        days = RETENTION_DAYS if args.garder_jours is None else args.garder_jours
        written = path if args.command == "sauvegarder" else None
        deleted, kept, damaged = purge(folder, args.garder, days, written)
        at_most = f", {args.garder} au plus" if args.garder is not None else ""
        print(
            f"Purge (rétention : {french_number(days)} jours{at_most}) : {len(deleted)} "
            f"sauvegarde(s) effacée(s), {len(kept)} gardée(s) dans {folder}.",
            *(f"  effacée : {path.name}" for path in deleted),
            *(f"  gardée : {path.name} — {why}" for path, why in kept),
            sep="\n",
        )
        for path, reason in {**passed, **dict(damaged)}.items():
            print(
                f"✘ Sauvegarde abîmée, gardée telle quelle\u00a0: {reason} Elle ne compte "
                "pas comme une sauvegarde du carnet de notes\u00a0; effacez-la vous-même "
                f"(rm {path}) ou gardez-la pour en tirer ce qui peut l'être.",
                file=sys.stderr,
            )
        if passed or damaged or any(why.startswith(_FAILED) for _, why in unsaved):
            return 1
    except (GradingError, FileNotFoundError) as exc:
        print(f"✘ {french_message(exc)}", file=sys.stderr)
        return 2
    except OSError as exc:  # the destination full, read-only, gone: a partial file never kept
        stopped = {
            "sauvegarder": "Aucune sauvegarde écrite",
            "restaurer": "Restauration arrêtée avant de finir (relancez-la, à l'identique)",
        }
        print(
            f"✘ {stopped.get(args.command, 'Purge arrêtée')}\u00a0: {french_message(exc)}",
            file=sys.stderr,
        )
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
