"""``make zip-collect``: submissions from an LMS or e-mail (zips) added to ``submitted/``, never
cleared (rules for the teacher: grader/README.md, « Une archive zip »). Not stock ``nbgrader
zip_collect``, whose ``--force`` (for a second download) clears every student's folder and which
a member ``../x`` stops: here archives are read member by member, never extracted.

What a zip proves (issues 32.9, 33.5): nothing signs it, so a member belongs to the student its
folder names only where nobody else could have put it. A **class export** (named after no
student): the folder is the identity, the member's (LMS's) date the submission time; a
**student's own archive** speaks for that student only, its dates prove nothing; no date is later
than the archive's own on disk. Without a proven time, one rule for the whole class."""

from __future__ import annotations

import lzma
import os
import re
import shutil
import stat
import struct
import sys
import time
import zipfile
import zlib
from collections.abc import Iterator
from contextlib import ExitStack, suppress
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from itertools import groupby
from operator import attrgetter
from pathlib import Path, PurePosixPath
from zoneinfo import ZoneInfo

from nbgrader.utils import parse_utc

from .classroom.class_lock import class_lock
from .classroom.gradebook import gradebook_problem, gradebook_rows
from .classroom.ids import (
    closest,
    id_problem,
    normalize_id,
    quoted,
    registered_students,
    shown,
    stored_id_problem,
)
from .classroom.paths import course_dirs, not_regular, tree
from .classroom.private import make_private
from .french.french_args import FrenchParser
from .french.french_format import COURSE_TIME_ZONE, collation_key, french_datetime, listed
from .french.system_reason import GradingError, french_message, french_reason
from .privacy.erasure_register import skip_erased
from .privacy.packed import DAMAGED, UNOPENABLE, unopenable_reason
from .runs.submitted_ids import expected_notebooks

__all__ = ["DATING_FILE", "Member", "ZipReport", "main", "members", "zip_collect"]

MAX_MEMBER_BYTES = 50 * 1024 * 1024  # a notebook of the TP is a few dozen kB
JUNK = re.compile(r"(^|/)(__MACOSX/|\._[^/]*$|\.DS_Store$|Thumbs\.db$)")
DATING_FILE = "heure-de-rendu.txt"  # beside timestamp.txt: how the time was found (French)
UNDATED_RULES = {
    "a-l-heure": "à l'heure, datée de la date limite (SANS_HEURE=a-l-heure)",
    "retard": "datée de l'arrivée de l'archive chez vous (SANS_HEURE=retard)",
}
RULE_FILE = "regle-sans-heure.txt"  # in <downloaded>/<assignment>/: the rule once applied
DOS_SLACK = 14 * 3600  # a DOS date has no zone: the widest gap between two zones
_NAME_TOKENS = re.compile(r"[\s_.\-+]+")
_READABLE = {zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA}
_CORRUPT = (zlib.error, lzma.LZMAError)  # the decompressors' own errors (bz2's is an OSError)


@dataclass
class Member:
    """One file of the download: a zip member or a file dropped as is."""

    origin: str  # "<archive>:<member>" or the file's name, for messages
    path: str  # what the collector's regexp reads: "/<archive stem>/<member path>"
    mtime: float  # when it reached the instructor: the archive's (or file's) date on disk
    read: object  # () -> bytes
    problem: str | None = None
    containers: tuple[str, ...] = ()  # folders and archive names around it, outermost first
    archive: str | None = None  # the zip it comes from (None: a file dropped as is)
    date: float | None = None  # the member's own date in the zip (None: none written)
    exact: bool = False  # `date` from the zip's extended timestamp (UTC), not a DOS date


@dataclass
class ZipReport:
    collected: list[str] = field(default_factory=list)  # new students
    replaced: list[str] = field(default_factory=list)  # newer copies
    unchanged: list[str] = field(default_factory=list)
    older: list[str] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)  # not notebooks, macOS metadata
    dated: list[str] = field(default_factory=list)  # "<id> : <how>", time written
    undated: list[str] = field(default_factory=list)  # "<id> : <why>", no time, no rule
    problems: list[str] = field(default_factory=list)  # named, skipped: exit status 1
    kept: list[Path] = field(default_factory=list)  # previous copies set aside

    def lines(self, assignment: str, whole: Path | None = None) -> list[str]:
        """The summary; with `whole` (where the whole of it is written), each list is cut at
        LISTED items (``french_format.listed``)."""
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
                out.append(f"{label}\u00a0: {', '.join(sorted(items, key=collation_key))}")
        out += listed("Copies précédentes gardées dans\u00a0:", self.kept, whole)
        out += listed("Heure de rendu écrite (timestamp.txt)\u00a0:", self.dated, whole)
        if self.undated:
            what = f"✘ {len(self.undated)} copie(s) collectée(s) sans heure de rendu connue\u00a0:"
            out += listed(what, self.undated, whole)
            out.append(
                "  Choisissez la règle, la même pour tous, et relancez\u00a0: "
                "make zip-collect SANS_HEURE=a-l-heure (datées de la date limite) ou "
                "SANS_HEURE=retard (datées de l'arrivée de l'archive chez vous)."
            )
        if self.ignored:
            out.append(f"{len(self.ignored)} fichier(s) ignoré(s) (pas un notebook)")
        out += listed(
            f"✘ {len(self.problems)} fichier(s) non collecté(s)\u00a0:", self.problems, whole
        )
        return [shown(line) for line in out]  # names from the archive: no escape, no new line


def _unsafe(name: str, info: zipfile.ZipInfo) -> str | None:
    """Why an archive member cannot be collected (French), or None."""
    for bad, why in (
        ("\x00" in name, "nom contenant un caractère nul"),
        (name.startswith("/") or re.match(r"^[A-Za-z]:", name), "chemin absolu"),
        (".." in PurePosixPath(name).parts, f"chemin qui sort du dossier ({quoted('..')})"),
        (stat.S_ISLNK(info.external_attr >> 16), "lien symbolique"),
        (info.flag_bits & 0x1, "fichier chiffré"),
        (info.file_size > MAX_MEMBER_BYTES, f"trop gros ({info.file_size} octets)"),
        (
            info.compress_type not in _READABLE,
            f"compression non prise en charge ({info.compress_type})",
        ),
    ):
        if bad:
            return why
    return None


def _zip_time(info: zipfile.ZipInfo) -> tuple[float | None, bool]:
    """(the member's date as a Unix time, exact): its extended timestamp (0x5455, UTC), else its
    DOS date in the course's time zone; None for the zip format's empty date (1980)."""
    extra, pos = info.extra, 0
    while pos + 4 <= len(extra):
        kind, size = struct.unpack_from("<HH", extra, pos)
        data = extra[pos + 4 : pos + 4 + size]
        if kind == 0x5455 and len(data) >= 5 and data[0] & 1:
            return float(int.from_bytes(data[1:5], "little", signed=True)), True
        pos += 4 + size
    with suppress(ValueError):  # a DOS date that is no date
        if info.date_time[:3] > (1980, 1, 1):
            return datetime(*info.date_time, tzinfo=ZoneInfo(COURSE_TIME_ZONE)).timestamp(), False
    return None, False


def members(archive_dir: Path, report: ZipReport, opened: ExitStack) -> Iterator[Member]:
    """Every file downloaded, zips member by member (left open in `opened`: read when chosen)."""
    for rel, file, mode in tree(archive_dir, levels=3):  # grader/downloaded/<A>/archive
        if mode not in (stat.S_IFREG, stat.S_IFLNK):
            continue
        if mode == stat.S_IFLNK:
            report.problems.append(f"{rel}\u00a0: lien symbolique, ignoré")
            continue
        # its change time: when it was written here; its modification time is the student's to
        # set (touch -d), and a copy from their USB key keeps it
        received = min(file.stat().st_ctime, time.time())
        folders = tuple(normalize_id(part) for part in PurePosixPath(rel).parts[:-1])
        if file.suffix.lower() != ".zip":
            yield Member(rel, f"/{rel}", received, file.read_bytes, containers=folders)
            continue
        try:
            zf = opened.enter_context(zipfile.ZipFile(file))
        except UNOPENABLE as exc:
            report.problems.append(f"{rel}\u00a0: archive illisible ({unopenable_reason(exc)})")
            continue
        stem = file.name[: -len(file.suffix)]
        for info in (info for info in zf.infolist() if not info.is_dir()):
            name = normalize_id(info.filename.replace("\\", "/"))
            origin = f"{rel}\u00a0: {info.filename}"

            def read(zf=zf, info=info) -> bytes:
                with zf.open(info) as fh:
                    data = fh.read(MAX_MEMBER_BYTES + 1)
                if len(data) > MAX_MEMBER_BYTES:
                    raise ValueError("trop gros")
                return data

            around = (*folders, normalize_id(stem), *PurePosixPath(name).parts[:-1])
            problem = _unsafe(name, info)
            yield Member(
                origin, f"/{stem}/{name}", received, read, problem, around, rel, *_zip_time(info)
            )


@dataclass
class _Copy:
    student: str
    notebook: str
    member: Member
    time: float | None  # the submission time, when the archive proves one
    how: str  # French: how `time` was found, or why there is none

    @property
    def order(self) -> float:
        """Which copy of a student is the newest: its time, else its arrival."""
        return self.time if self.time is not None else self.member.mtime


def zip_collect(
    assignment: str, grader_dir: Path | None = None, undated: str | None = None
) -> ZipReport:
    """Collect `assignment`'s download folder; `undated`: the rule for copies without a time."""
    if undated is not None and undated not in UNDATED_RULES:  # refused before a copy is written
        rules = " ou ".join(f"SANS_HEURE={k}" for k in UNDATED_RULES)
        raise ValueError(f"SANS_HEURE={undated}\u00a0: règle inconnue, choisissez {rules}.")
    dirs = course_dirs(grader_dir)
    if why := gradebook_problem(dirs, missing_ok=True):  # else a traceback, after copies
        raise ValueError(f"Rien n'a été ramassé\u00a0: {why}.")
    config = dirs.config
    base = dirs.downloaded / assignment
    archive_dir = base / config.ZipCollectApp.get("archive_directory", "archive")
    if not (regexp := config.FileNameCollectorPlugin.get("named_regexp", "")):
        raise ValueError(
            "FileNameCollectorPlugin.named_regexp manque dans nbgrader_config.py\u00a0: "
            "il dit où lire l'identifiant de l'élève dans le nom des fichiers."
        )
    if not archive_dir.is_dir():
        raise FileNotFoundError(
            f"Aucun dossier {archive_dir}\u00a0: déposez-y les archives (zip) ou les notebooks."
        )
    undated = _one_rule(base / RULE_FILE, undated)
    expected = expected_notebooks(dirs, assignment)
    registered = [normalize_id(s) for s in registered_students(dirs.db_url)]
    report = ZipReport()
    with ExitStack() as opened:
        found = members(archive_dir, report, opened)
        found = skip_erased(found, regexp, dirs, report.problems)  # RGPD: erased stay erased
        chosen = _choose(found, regexp, registered, expected, assignment, report)
        due = _due(dirs.db_url, assignment) if undated == "a-l-heure" else None
        _write(dirs.submitted, assignment, base, chosen, report, partial(_time_of, undated, due))
        if undated and any(UNDATED_RULES[undated] in line for line in report.dated):
            (base / RULE_FILE).write_text(undated + "\n", encoding="utf-8")
    return report


def _one_rule(path: Path, undated: str | None) -> str | None:
    """The rule for undated copies, one for the class: the one applied before (``RULE_FILE``)."""
    try:
        applied = path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        return undated
    if applied not in UNDATED_RULES:
        raise ValueError(f"{path}\u00a0: règle {quoted(applied)} inconnue, fichier abîmé.")
    if undated is not None and undated != applied:
        raise ValueError(
            f"SANS_HEURE={undated} refusé\u00a0: des copies de ce devoir sont déjà datées avec "
            f"SANS_HEURE={applied} (noté dans {path}), et la règle est la même pour tous."
        )
    return applied


def _choose(found, regexp, registered, expected, assignment, report) -> dict:
    """The copy of each (student, notebook) to collect: the newest; every refusal named."""
    found = [(member, re.match(regexp, member.path)) for member in found]
    # no class list: the ids the download itself names
    known = set(registered) or {
        normalize_id(m["student_id"]) for _, m in found if m and "student_id" in m.groupdict()
    }
    chosen: dict[tuple[str, str], _Copy] = {}
    for member, match in found:
        if JUNK.search(member.path):
            continue
        if not member.problem and not member.path.lower().endswith(".ipynb"):
            report.ignored.append(member.origin)
            continue
        copy = _copy_of(member, match, registered, expected, assignment, known)
        if isinstance(copy, str):
            report.problems.append(f"{member.origin}\u00a0: {copy}")
        elif (key := (copy.student, copy.notebook)) not in chosen or copy.order > chosen[key].order:
            chosen[key] = copy
    return chosen


def _copy_of(member, match, registered, expected, assignment, known) -> _Copy | str:
    """The copy `member` is, or why it is not collected (French)."""
    if member.problem:
        return f"{member.problem}, ignoré"
    if not match or "student_id" not in match.groupdict():
        return "aucun identifiant d'élève dans ce chemin (attendu\u00a0: <id>/<notebook>.ipynb)"
    student = normalize_id(match["student_id"])
    notebook = normalize_id(PurePosixPath(match["file_id"]).name)
    # a registered id is matched as it is; a new one is admitted by the class's one rule
    problem = (stored_id_problem if student in registered else id_problem)(student)
    if problem:
        return problem
    for name, names, refusal, near in (
        (student, registered, "n'est pas un élève inscrit", "le plus proche inscrit est "),
        (notebook, expected, f"n'est pas un notebook de {quoted(assignment)}", "attendu\u00a0: "),
    ):
        if names and name not in names:
            hint = closest(name, names)
            return f"{quoted(name)} {refusal}" + (f"\u00a0; {near}{quoted(hint)}" if hint else "")
    stamp = None
    with suppress(ValueError, OverflowError):  # the collector's ``timestamp`` group
        if text := match.groupdict().get("timestamp"):
            stamp = parse_utc(text).replace(tzinfo=UTC).timestamp()
    # what the archive proves (see the module); refused when another student's archive or
    # folder holds it
    containers = list(member.containers)
    if student in containers:  # the student's own folder (the last one of that name)
        del containers[len(containers) - 1 - containers[::-1].index(student)]
    # the students a folder or archive name designates: the whole name (``ben_2.zip``: ben_2
    # only), else one of its words (``ben.zip``, ``ben_rendu``, ``Rendu-ben``)
    owners = {w for c in containers for w in ({c} if c in known else set(_NAME_TOKENS.split(c)))}
    if others := sorted(owners & known - {student}):  # another's archive or folder, any depth
        return (
            f"notebook de {quoted(student)} dans l'archive ou le dossier de "
            f"{quoted(others[0])}\u00a0: mis de côté (une archive d'élève ne rend que "
            "pour son élève)"
        )
    owners &= known
    copy = partial(_Copy, student, notebook, member)  # its time, how it was found
    if member.archive is None:
        return copy(None, "fichier déposé tel quel, sans heure de rendu")
    where = quoted(member.archive)
    if student in owners or normalize_id(PurePosixPath(member.archive).stem) == student:
        return copy(None, f"archive de l'élève {where}\u00a0: ses dates ne prouvent rien")
    ceiling = min(member.mtime, time.time())
    if stamp is not None and stamp <= ceiling + DOS_SLACK:
        return copy(min(stamp, ceiling), f"heure dans le nom du fichier, {where}")
    if member.date is None:
        return copy(None, f"export {where} sans date pour ce fichier")
    if member.date > ceiling + (2 if member.exact else DOS_SLACK):
        late = f"({_french(member.date)}) postérieure à l'archive elle-même\u00a0: non retenue"
        return copy(None, f"date du fichier dans {where} {late}")
    return copy(min(member.date, ceiling), f"date du fichier dans l'export {where}")


def _french(moment: float) -> str:
    """A Unix time as the course writes it: ``14/03/2025 17:00`` (its time zone)."""
    return french_datetime(datetime.fromtimestamp(moment, UTC))


def _due(db_url: str, assignment: str) -> float | None:
    """The assignment's due date in the gradebook (Unix time), None without one; read without
    writing (nbgrader's Gradebook would make an empty gradebook in place of a lost one)."""
    rows = gradebook_rows(db_url, "SELECT name, duedate FROM assignment") or []
    due = next((when for name, when in rows if name == assignment), None)
    if isinstance(due, str):  # SQLite keeps it as text, naive UTC
        due = datetime.fromisoformat(due)
    return None if due is None else due.replace(tzinfo=UTC).timestamp()


def _time_of(rule: str | None, due: float | None, copies: list[_Copy]) -> tuple[float | None, str]:
    """A student's submission time from the copies written now, and how it was found."""
    if all(c.time is not None for c in copies):
        latest = max(copies, key=lambda c: c.time or 0.0)
        return latest.time, latest.how
    why = "\u00a0; ".join(sorted({c.how for c in copies if c.time is None}))
    if rule == "a-l-heure" and due is None:
        return None, f"{why}\u00a0: à l'heure (pas de date limite)"
    if rule is not None:
        moment = due if rule == "a-l-heure" else max(c.member.mtime for c in copies)
        return moment, f"{why}\u00a0: {UNDATED_RULES[rule]}"
    return None, why


def _stamp(folder: Path, moment: float | None, how: str, student: str, report) -> None:
    """Write (or clear) the folder's time, then how it was found: never explain a failed write."""
    if moment is not None:  # UTC, nbgrader's own format
        utc = datetime.fromtimestamp(moment, UTC).strftime("%Y-%m-%d %H:%M:%S.%f UTC")
        (folder / "timestamp.txt").write_text(utc, encoding="utf-8")
    else:
        (folder / "timestamp.txt").unlink(missing_ok=True)  # the replaced copy's (remplaces/)
    (folder / DATING_FILE).write_text(how + "\n", encoding="utf-8")
    undated = moment is None and "pas de date limite" not in how
    when = "" if moment is None else f"{_french(moment)}, "
    (report.undated if undated else report.dated).append(f"{student}\u00a0: {when}{how}")


def _write(submitted: Path, assignment: str, base: Path, chosen: dict, report, dating) -> None:
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    student_of = attrgetter("student")
    for student, copies in groupby(sorted(chosen.values(), key=student_of), key=student_of):
        folder = submitted / student / assignment
        if linked := next((p for p in (folder.parent, folder) if p.is_symlink()), None):
            report.problems.append(  # never written through (it may lead out of the course)
                f"{linked.relative_to(submitted)}\u00a0: lien symbolique, jamais suivi\u00a0; "
                "les nouvelles copies ne sont pas collectées\u00a0: remplacez-le par le dossier "
                "lui-même, puis relancez"
            )
            continue
        new = not os.path.lexists(folder)
        changes, same, older = [], [], False
        for copy in copies:
            try:
                data = copy.member.read()
            except (*DAMAGED, ValueError) as exc:  # ValueError: read()'s « trop gros »
                corrupt = isinstance(exc, _CORRUPT)
                why = "données compressées abîmées" if corrupt else french_reason(exc)
                report.problems.append(f"{copy.member.origin}\u00a0: illisible ({why})")
                continue
            dest = folder / copy.notebook
            if dest.exists() and dest.read_bytes() == data:
                same.append(copy)
            elif not dest.exists() or copy.order > dest.stat().st_mtime:
                changes.append((copy, data))
            else:
                older = True
        if not changes:
            (report.older if older else report.unchanged).append(student)
            if same and not (folder / "timestamp.txt").exists():
                # collected before without a time: dated now if it can be (or named again)
                _stamp(folder, *dating(same), student, report)
            continue
        if not new and (strange := not_regular(folder, levels=3)):  # never copied nor followed
            named = "\u00a0; ".join(f"{rel} ({what})" for rel, what in strange)
            report.problems.append(
                f"{student}/{assignment}\u00a0: copie déjà collectée laissée telle quelle, les "
                f"nouvelles non collectées ({named})\u00a0: réglez cela, puis relancez"
            )
            continue
        if not new and not (keep := base / "remplaces" / student / stamp).exists():
            shutil.copytree(folder, keep)
            report.kept.append(keep)
        folder.mkdir(parents=True, exist_ok=True)
        # the replaced copy's time goes first (kept in remplaces/): stopped before the new one
        # is dated, the next run dates it (« sans heure »), never with the replaced one's
        (folder / "timestamp.txt").unlink(missing_ok=True)
        for copy, data in changes:
            dest = folder / copy.notebook
            tmp = dest.with_name(f".{dest.name}.tmp")
            tmp.write_bytes(data)
            os.utime(tmp, (copy.order, copy.order))
            tmp.replace(dest)
        _stamp(folder, *dating([c for c, _ in changes]), student, report)
        (report.collected if new else report.replaced).append(student)


def main(argv: list[str] | None = None) -> int:
    parser = FrenchParser(
        prog="python -m grading.zip_collect",
        description="Collecte des rendus téléchargés (zip d'un ENT, e-mails)\u00a0: ajoute les "
        "nouveaux élèves et les copies plus récentes, n'efface rien.",
    )
    parser.add_assignment()
    parser.add_grader_dir()
    parser.add_argument(
        "--sans-heure",
        dest="undated",
        choices=sorted(UNDATED_RULES),
        help="règle des copies sans heure de rendu connue, la même pour tous\u00a0: "
        "a-l-heure (datées de la date limite) ou retard (datées de l'arrivée de l'archive)",
    )
    args = parser.parse_args(argv)
    try:
        with class_lock(args.grader_dir, "make zip-collect"):
            report = zip_collect(args.assignment, args.grader_dir, args.undated)
    except (FileNotFoundError, ValueError, GradingError) as exc:
        print(f"✘ {french_message(exc)}", file=sys.stderr)
        return 2
    dirs = course_dirs(args.grader_dir)
    whole = dirs.log_file("zip-collect")
    whole.write_text("\n".join(report.lines(args.assignment)) + "\n", encoding="utf-8")
    print("\n".join(report.lines(args.assignment, whole)))
    # the teacher's archives, downloaded from the ENT and put there at the usual umask
    rights, private = make_private(dirs.downloaded, "rendus de la classe")
    if rights:
        print(rights)
    return 1 if report.problems or report.undated or not private else 0


if __name__ == "__main__":
    raise SystemExit(main())
