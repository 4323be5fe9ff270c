"""Submissions from an LMS or e-mail (zips), collected into ``submitted/``: adds, never clears.

    python -m grading.zip_collect oublier        (make zip-collect)

Stock ``nbgrader zip_collect`` re-extracts every archive and, for a second download
(latecomers), needs ``--force``, which clears every student's folder (a hand-written
``timestamp.txt`` and the lateness it carries go with it); one member whose path leaves the
folder (``../x``) stops the whole collection. Here, with the same configuration
(``ZipCollectApp.downloaded_directory``, ``FileNameCollectorPlugin.named_regexp``), the
archives in ``<downloaded>/<assignment>/archive/`` are read member by member, without
extracting them anywhere else:

- a new student is collected; a copy identical to the one collected changes nothing; a
  different copy dated after it (the zip's date) replaces the notebook, the previous folder
  being kept first in ``<downloaded>/<assignment>/remplaces/``; an older one is left out;
  ``timestamp.txt`` is never removed;
- ids are read in Unicode NFC (a macOS zip's ``chlo`` + U+0301 is ``chloé``); an id that
  matches no registered student, a notebook name the assignment does not have
  (``oublier (1).ipynb``), a member whose path is unsafe (absolute, ``..``, a link) or too
  large is skipped and named, with the closest registered id or notebook name, everyone else is
  collected, and the command exits with status 1.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import sys
import time
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path, PurePosixPath

from .erasure_register import skip_erased
from .french_args import FrenchParser
from .ids import closest, id_problem, normalize_id, quoted, registered_students
from .paths import course_dirs, load_config
from .system_reason import french_message, french_reason

__all__ = ["Member", "ZipReport", "main", "members", "zip_collect"]

MAX_MEMBER_BYTES = 50 * 1024 * 1024  # a notebook of the TP is a few dozen kB
JUNK = re.compile(r"(^|/)(__MACOSX/|\._[^/]*$|\.DS_Store$|Thumbs\.db$)")


@dataclass
class Member:
    """One file of the download: a zip member or a file dropped as is."""

    origin: str  # "<archive>:<member>" or the file's name, for messages
    path: str  # what the collector's regexp reads: "/<archive stem>/<member path>"
    mtime: float  # its date (the zip's, or the file's)
    read: object  # () -> bytes
    problem: str | None = None


@dataclass
class ZipReport:
    collected: list[str] = field(default_factory=list)  # new students
    replaced: list[str] = field(default_factory=list)  # newer copies
    unchanged: list[str] = field(default_factory=list)
    older: list[str] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)  # not notebooks, macOS metadata
    problems: list[str] = field(default_factory=list)  # named, skipped: exit status 1
    kept: list[Path] = field(default_factory=list)  # previous copies set aside

    @property
    def ok(self) -> bool:
        return not self.problems

    def lines(self, assignment: str) -> list[str]:
        out = [
            f"{assignment}\u00a0: {len(self.collected)} élève(s) collecté(s), "
            f"{len(self.replaced)} copie(s) plus récente(s) remplacée(s), "
            f"{len(self.unchanged)} déjà collectée(s) à l'identique, "
            f"{len(self.older)} plus ancienne(s) laissée(s) de côté, "
            f"{len(self.problems)} problème(s)."
        ]
        for label, items in (
            ("Collectés", self.collected),
            ("Remplacés (ancienne copie gardée)", self.replaced),
            ("Plus anciens que la copie collectée, non repris", self.older),
        ):
            if items:
                out.append(f"{label}\u00a0: {', '.join(items)}")
        if self.kept:
            out.append("Copies précédentes gardées dans\u00a0:")
            out += [f"  - {p}" for p in self.kept]
        if self.ignored:
            out.append(f"{len(self.ignored)} fichier(s) ignoré(s) (pas un notebook)")
        if self.problems:
            out.append(f"✘ {len(self.problems)} fichier(s) non collecté(s)\u00a0:")
            out += [f"  - {p}" for p in self.problems]
        return out


def _unsafe(name: str, info: zipfile.ZipInfo | None) -> str | None:
    """Why an archive member cannot be collected (French), or None."""
    if "\x00" in name:
        return "nom contenant un caractère nul"
    parts = PurePosixPath(name).parts
    if name.startswith("/") or re.match(r"^[A-Za-z]:", name):
        return "chemin absolu"
    if ".." in parts:
        return f"chemin qui sort du dossier ({quoted('..')})"
    if info is not None:
        if stat.S_ISLNK(info.external_attr >> 16):
            return "lien symbolique"
        if info.flag_bits & 0x1:
            return "fichier chiffré"
        if info.file_size > MAX_MEMBER_BYTES:
            return f"trop gros ({info.file_size} octets)"
    return None


def _zip_time(info: zipfile.ZipInfo) -> float:
    return time.mktime((*info.date_time, 0, 0, -1))


def members(archive_dir: Path, report: ZipReport, opened: list) -> Iterator[Member]:
    """Every file of the download folder, zips read member by member (each zip stays open, in
    `opened`, until the caller closes them: members are read after the choice)."""
    for file in sorted(p for p in archive_dir.rglob("*") if p.is_file() or p.is_symlink()):
        rel = file.relative_to(archive_dir).as_posix()
        if file.is_symlink():
            report.problems.append(f"{rel}\u00a0: lien symbolique, ignoré")
            continue
        if file.suffix.lower() != ".zip":
            yield Member(rel, f"/{rel}", file.stat().st_mtime, file.read_bytes)
            continue
        try:
            zf = zipfile.ZipFile(file)
        except (zipfile.BadZipFile, OSError) as exc:
            report.problems.append(f"{rel}\u00a0: archive illisible ({french_reason(exc)})")
            continue
        opened.append(zf)
        stem = file.name[: -len(file.suffix)]
        for info in zf.infolist():
            if info.is_dir():
                continue
            name = normalize_id(info.filename.replace("\\", "/"))
            origin = f"{rel}\u00a0: {info.filename}"

            def read(zf=zf, info=info) -> bytes:
                with zf.open(info) as fh:
                    data = fh.read(MAX_MEMBER_BYTES + 1)
                if len(data) > MAX_MEMBER_BYTES:
                    raise ValueError("trop gros")
                return data

            yield Member(origin, f"/{stem}/{name}", _zip_time(info), read, _unsafe(name, info))


@dataclass
class _Copy:
    student: str
    notebook: str
    member: Member
    timestamp: str | None


def _parse_timestamp(text: str | None) -> str | None:
    if not text:
        return None
    from nbgrader.utils import parse_utc

    try:
        return parse_utc(text).isoformat(" ")
    except ValueError:
        return None


def zip_collect(assignment: str, grader_dir: Path | None = None) -> ZipReport:
    """Collect the download folder of `assignment` into ``submitted/`` (see the module)."""
    dirs = course_dirs(grader_dir)
    config = load_config(dirs.grader_dir)
    downloaded = Path(config.ZipCollectApp.get("downloaded_directory", "downloaded"))
    base = dirs.root / downloaded / assignment
    archive_dir = base / config.ZipCollectApp.get("archive_directory", "archive")
    regexp = config.FileNameCollectorPlugin.get("named_regexp", "")
    if not regexp:
        raise ValueError(
            "FileNameCollectorPlugin.named_regexp manque dans nbgrader_config.py\u00a0: "
            "il dit où lire l'identifiant de l'élève dans le nom des fichiers."
        )
    if not archive_dir.is_dir():
        raise FileNotFoundError(
            f"Aucun dossier {archive_dir}\u00a0: déposez-y les archives (zip) ou les notebooks."
        )
    expected = sorted(p.name for p in (dirs.release / assignment).glob("*.ipynb"))
    if not expected:
        expected = sorted(p.name for p in (dirs.source / assignment).glob("*.ipynb"))
    registered = [normalize_id(s) for s in registered_students(dirs.db_url)]
    report = ZipReport()
    opened: list[zipfile.ZipFile] = []
    try:
        found = members(archive_dir, report, opened)
        found = skip_erased(found, regexp, dirs, report.problems)  # RGPD: erased stay erased
        chosen = _choose(found, regexp, registered, expected, assignment, report)
        _write(dirs.submitted, assignment, base, chosen, report)
    finally:
        for zf in opened:
            zf.close()
    return report


def _choose(found, regexp, registered, expected, assignment, report) -> dict:
    """The copy of each (student, notebook) to collect: the newest; every refusal named."""
    chosen: dict[tuple[str, str], _Copy] = {}
    for member in found:
        if JUNK.search(member.path):
            continue
        if member.problem:
            report.problems.append(f"{member.origin}\u00a0: {member.problem}, ignoré")
            continue
        if not member.path.lower().endswith(".ipynb"):
            report.ignored.append(member.origin)
            continue
        match = re.match(regexp, member.path)
        if not match or "student_id" not in match.groupdict():
            report.problems.append(
                f"{member.origin}\u00a0: aucun identifiant d'élève dans ce chemin "
                "(attendu\u00a0: <id>/<notebook>.ipynb)"
            )
            continue
        student = normalize_id(match["student_id"])
        notebook = normalize_id(PurePosixPath(match["file_id"]).name)
        problem = id_problem(student)
        if problem:
            report.problems.append(f"{member.origin}\u00a0: {problem}")
            continue
        if registered and student not in registered:
            hint = closest(student, registered)
            near = f"\u00a0; le plus proche inscrit est {quoted(hint)}" if hint else ""
            report.problems.append(
                f"{member.origin}\u00a0: {quoted(student)} n'est pas un élève inscrit{near}"
            )
            continue
        if expected and notebook not in expected:
            hint = closest(notebook, expected)
            near = f"\u00a0; attendu\u00a0: {quoted(hint)}" if hint else ""
            report.problems.append(
                f"{member.origin}\u00a0: {quoted(notebook)} n'est pas un notebook de "
                f"{quoted(assignment)}{near}"
            )
            continue
        copy = _Copy(
            student, notebook, member, _parse_timestamp(match.groupdict().get("timestamp"))
        )
        key = (student, notebook)
        if key not in chosen or member.mtime > chosen[key].member.mtime:
            chosen[key] = copy
    return chosen


def _write(submitted: Path, assignment: str, base: Path, chosen: dict, report: ZipReport) -> None:
    by_student: dict[str, list[_Copy]] = {}
    for copy in chosen.values():
        by_student.setdefault(copy.student, []).append(copy)
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    for student in sorted(by_student):
        folder = submitted / student / assignment
        new = not folder.exists()
        changes: list[tuple[_Copy, bytes]] = []
        older = False
        for copy in by_student[student]:
            try:
                data = copy.member.read()
            except (ValueError, OSError, zipfile.BadZipFile) as exc:
                report.problems.append(
                    f"{copy.member.origin}\u00a0: illisible ({french_reason(exc)})"
                )
                continue
            dest = folder / copy.notebook
            if not dest.exists():
                changes.append((copy, data))
            elif dest.read_bytes() == data:
                continue
            elif copy.member.mtime > dest.stat().st_mtime:
                changes.append((copy, data))
            else:
                older = True
        if not changes:
            (report.older if older else report.unchanged).append(student)
            continue
        if not new:
            keep = base / "remplaces" / student / stamp
            if not keep.exists():
                shutil.copytree(folder, keep)
                report.kept.append(keep)
        folder.mkdir(parents=True, exist_ok=True)
        for copy, data in changes:
            dest = folder / copy.notebook
            tmp = dest.with_name(f".{dest.name}.tmp")
            tmp.write_bytes(data)
            os.utime(tmp, (copy.member.mtime, copy.member.mtime))
            tmp.replace(dest)
            if copy.timestamp and (new or not (folder / "timestamp.txt").exists()):
                (folder / "timestamp.txt").write_text(copy.timestamp, encoding="utf-8")
        (report.collected if new else report.replaced).append(student)


def main(argv: list[str] | None = None) -> int:
    parser = FrenchParser(
        prog="python -m grading.zip_collect",
        description="Collecte des rendus téléchargés (zip d'un ENT, e-mails)\u00a0: ajoute les "
        "nouveaux élèves et les copies plus récentes, n'efface rien.",
    )
    parser.add_assignment()
    parser.add_grader_dir()
    args = parser.parse_args(argv)
    try:
        report = zip_collect(args.assignment, args.grader_dir)
    except (FileNotFoundError, ValueError) as exc:
        print(f"✘ {french_message(exc)}", file=sys.stderr)
        return 2
    print("\n".join(report.lines(args.assignment)))
    return 0 if report.ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
