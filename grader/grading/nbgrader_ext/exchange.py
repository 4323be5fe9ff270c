"""``nbgrader collect`` that never takes one student's copy for another's, and a feedback release
that publishes only the feedback pages (named in ``nbgrader_config.py``, so every caller uses them).

nbgrader 0.9.6 accepts ``nbgrader submit oublier --student bob`` from any user and its collect only
*warns* when the owner is not the student named: eve's newer copy becomes bob's (with ``update``,
formgrader's Collect, it replaces his collected work); a name it cannot parse stops the whole
collect; a link is followed. ``OwnerCheckedCollect`` takes only copies whose every file belongs to
the student they name (an owner without a name is not), the newest by nbgrader's rule; any other
copy is set aside (copied, never through a link, into ``grader/quarantaine/<assignment>/``) and
the command fails (status 1) after the rest is collected. Only the assignment's notebooks are
copied, by ``confined_copy``'s Landlock-confined child; any other file is named, never read; a copy
that turns bad between the check and the copy (a file swapped for a link) is set aside.

The submission's time is the newest ``ctime`` (no user can set it back) of the folder and the
notebooks copied, in ``timestamp.txt`` (the late penalty reads it); the student's claim goes to
``claimed_timestamp.txt``, information only. Whatever rewrites the exchange's modes or owners
(``fsGroup`` at each mount, an admin's ``chmod -R``) moves change times later: collect before.
"""

from __future__ import annotations

import datetime
import glob
import os
import pwd
import shutil
import stat
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

from nbgrader.api import Gradebook, MissingEntry
from nbgrader.exchange.default.collect import ExchangeCollect
from nbgrader.exchange.default.release_feedback import ExchangeReleaseFeedback
from nbgrader.utils import check_directory, check_mode, notebook_hash, parse_utc
from traitlets import Bool, Unicode

from ..classroom.class_places import DEPOSITED_BY
from ..classroom.gradebook import gradebook_rows, sqlite_path
from ..classroom.ids import id_problem, normalize_id, quoted, shown
from ..classroom.paths import QUARANTINE
from ..french.french_format import french_integer
from ..french.system_reason import french_reason
from ..privacy.erasure_register import class_registers, erased_problem
from .confined_copy import (
    SECRET,
    SMALL,
    TIMESTAMP,
    Unsafe,
    is_notebook,
    open_dir,
    read_optional,
    read_regular,
    run_copier,
    write_new,
)

__all__ = [
    "CLAIMED_TIMESTAMP",
    "COLLECT_LINES",
    "CONFINED",
    "IGNORED_LEAD",
    "IGNORED_SEP",
    "LEAD_SEP",
    "LEFT_OUT",
    "UNCONFINED_LEAD",
    "CheckedReleaseFeedback",
    "OwnerCheckedCollect",
]

PASSWD_ENV = "COURSE_HUB_PASSWD"
CLAIMED_TIMESTAMP = "claimed_timestamp.txt"  # the student's claimed time, as information
_PAGE_LIMIT = 1000 * 1000 * 1000  # bytes: a feedback page
# nbgrader 0.9.6's INFO line per student, "<lead>: <student> <assignment>" (grading.collect reads)
COLLECT_LINES = {
    "collected": "Collecting submission",
    "updated": "Updating submission",
    "unchanged": "No newer submission to collect",
    "already": "Submission already exists, use --update to update",
}
LEAD_SEP = ": "
# nbgrader 0.9.6's ExchangeReleaseFeedback.copy_files: one INFO line per page
_RELEASING = "Releasing feedback for student '%s' on assignment '%s/%s/%s' (%s)"
# the files of a copy that were not collected: lead, folder, IGNORED_SEP, names
IGNORED_LEAD = "Fichier(s) non ramassé(s) (seuls les notebooks du devoir le sont) dans "
IGNORED_SEP = "\u00a0: "
CONFINED = "Copie des rendus confinée : lecture de l'échange et écriture de submitted/ seules"
UNCONFINED_LEAD = "Copie des rendus NON confinée : "
# the feedback release's failure: "<n> <LEFT_OUT> (les autres l'ont) :", then "- «id» : why"
LEFT_OUT = "élève(s) sans page de retour rendue"
# nbgrader's ensure_root says « Unwritable directory, please contact your instructor »: here the
# instructor reads it, on a machine that may have no hub at all
_NO_EXCHANGE = (
    "pas de dossier de l'échange de nbgrader\u00a0: {root} (absent, ou pas accessible en "
    "écriture). make collect et make release-feedback passent par l'échange d'un JupyterHub "
    "(grader/hub/ADMIN.md)\u00a0; sans hub, les rendus se déposent dans grader/submitted/ ou "
    "par make zip-collect, et vous donnez à chaque élève sa page de grader/feedback/"
)


class _ExchangeRoot:
    """nbgrader's check of the exchange's root, its failure said in French."""

    root: str

    def ensure_root(self) -> None:
        if not check_directory(self.root, write=True, execute=True):
            self.fail(_NO_EXCHANGE.format(root=self.root))  # type: ignore[attr-defined]


def _utc(seconds: float) -> datetime.datetime:
    """A file time as nbgrader holds times: naive, in UTC (``parse_utc``)."""
    return datetime.datetime.fromtimestamp(seconds, datetime.UTC).replace(tzinfo=None)


def _utc_text(moment: datetime.datetime, fmt: str) -> str:
    return moment.replace(tzinfo=datetime.UTC).strftime(fmt)


@contextmanager
def _gradebook(coursedir, course: str) -> Iterator[Gradebook | None]:
    """nbgrader's gradebook, or None when there is none (no SQLite file, no tables on a server):
    never created to be read (a lost gradebook would become an empty one, not « restore it »)."""
    db_file = sqlite_path(coursedir.db_url)
    if db_file is None:  # a server: no tables of nbgrader's yet is no gradebook either
        missing = gradebook_rows(coursedir.db_url, "SELECT count(*) FROM student") is None
    else:
        missing = not db_file.is_file()
    if missing:
        yield None
        return
    with Gradebook(coursedir.db_url, course) as gb:
        yield gb


def assignment_notebooks(coursedir, gradebook: Gradebook | None = None) -> set[str] | None:
    """The assignment's notebook file names (the gradebook's, else the release's), or None."""
    assignment, names = coursedir.assignment_id, set()
    if gradebook is not None:
        with suppress(MissingEntry):
            names = {f"{nb.name}.ipynb" for nb in gradebook.find_assignment(assignment).notebooks}
    release = Path(coursedir.format_path(coursedir.release_directory, ".", assignment))
    if not names and release.is_dir():
        names = {p.name for p in release.glob("*.ipynb")}
    return names or None


def owner_name(uid: int) -> str | None:
    """`uid`'s user name (``pwd``, as nbgrader's), else in ``COURSE_HUB_PASSWD`` ("name:uid,…", the
    last wins: the hub's hook sets it, a Kubernetes pod's uids have no passwd entry), or None."""
    with suppress(KeyError):
        return pwd.getpwuid(uid).pw_name
    for entry in reversed(os.environ.get(PASSWD_ENV, "").split(",")):
        name, _, number = entry.strip().rpartition(":")
        if name and number.isdigit() and int(number) == uid:
            return name
    return None


def _owner_text(uid: int) -> str:
    name = owner_name(uid)
    return quoted(name) if name else f"l'uid {uid}, sans nom sur cette machine"


def depositors(path: Path) -> list[str]:
    """Who (user names, else « uid N ») owns the set-aside folder `path` and what is in it."""
    try:
        entries = [info for _, info in _tree(path)]  # a link is named, not followed
    except (OSError, _TooBig):
        try:
            entries = [path.lstat()]
        except OSError:
            entries = []
    names = {owner_name(info.st_uid) or f"uid {info.st_uid}": None for info in entries}
    return list(names)


# nbgrader submits a flat folder: a copy beyond these is set aside before it costs the collect
# a RecursionError (os.fwalk recurses per level on Python 3.11) or minutes of listing
_MAX_DEPTH = 32
_MAX_ENTRIES = 10_000
_TOO_MANY = f"le dossier contient plus de {french_integer(_MAX_ENTRIES)} fichiers et dossiers"


class _TooBig(Exception):
    """A copy deeper or larger than a submission can be (the message is French)."""


def _raise(exc: OSError) -> None:
    raise exc


def _tree(path: Path) -> list[tuple[Path, os.stat_result]]:
    """`path` then all beneath it in name order, each with its lstat, walked without ever entering
    a link: ``os.fwalk`` lists a folder only if what it opened is what it checked, so a copy named
    like a submission that links to ``/`` (or a folder swapped for one mid-walk) is never walked."""
    top = (path, path.lstat())
    if not stat.S_ISDIR(top[1].st_mode):
        return [top]
    beneath = []
    for folder, dirs, files, fd in os.fwalk(path, follow_symlinks=False, onerror=_raise):
        if dirs and len(Path(folder).relative_to(path).parts) >= _MAX_DEPTH:
            raise _TooBig(f"le dossier a plus de {_MAX_DEPTH} niveaux de sous-dossiers")
        for name in dirs + files:
            beneath.append((Path(folder, name), os.stat(name, dir_fd=fd, follow_symlinks=False)))
        if len(beneath) > _MAX_ENTRIES:
            raise _TooBig(_TOO_MANY)
    return [top, *sorted(beneath, key=lambda entry: entry[0].parts)]


def ownership_problem(path: Path, student: str, check_owner: bool = True) -> str | None:
    """Why the exchange folder `path` is not `student`'s own copy (French), or None: it and
    everything in it must be real folders and files (no link, no device) owned by `student`."""
    want = normalize_id(student)
    try:
        for entry, info in _tree(path):
            where = "le dossier" if entry == path else quoted(entry.relative_to(path))
            if stat.S_ISLNK(info.st_mode):
                return f"{where} est un lien symbolique"
            if not (stat.S_ISDIR(info.st_mode) or stat.S_ISREG(info.st_mode)):
                return f"{where} n'est ni un dossier ni un fichier"
            name = owner_name(info.st_uid)
            if check_owner and (name is None or normalize_id(name) != want):
                return f"{where} appartient à {_owner_text(info.st_uid)}, pas à {quoted(student)}"
    except _TooBig as exc:
        return str(exc)
    except OSError as exc:
        return f"illisible ({french_reason(exc)})"
    return None


@dataclass
class SetAside:
    """A copy of the exchange that was not collected, and where it was kept."""

    name: str  # in the exchange's inbound
    reason: str
    kept: Path | None = None
    keep: bool = True  # an erased learner's copy is never copied into the course


def _write_lines(path: Path, lines: Iterable[str]) -> None:
    """A text file of names a student chose, each escaped: no forged line, no escape sequence."""
    path.write_text("".join(f"{shown(line)}\n" for line in lines), encoding="utf-8")


class OwnerCheckedCollect(_ExchangeRoot, ExchangeCollect):
    """nbgrader's collect of the students' own copies: their notebooks, dated by the instructor."""

    quarantine_directory = Unicode(
        QUARANTINE, help="Where copies not collected are kept (relative to CourseDirectory.root)."
    ).tag(config=True)
    confined = Bool(
        True,
        help="Copy the students' notebooks in a child process confined by Linux's Landlock "
        "(it reads only the exchange's inbound and writes only a staging folder). When False, "
        "the same child copies unconfined, as where the kernel lacks Landlock (the summary "
        "names it).",
    ).tag(config=True)

    set_aside: list[SetAside]
    expected: set[str] | None

    def init_src(self) -> None:
        # nbgrader's own checks, not its choice of copies (see the module's docstring)
        course, assignment = self.coursedir.course_id, self.coursedir.assignment_id
        if self.coursedir.student_id and self.coursedir.student_id != "*":
            self.coursedir.student_id = normalize_id(self.coursedir.student_id)
        if course == "":
            self.fail("Aucun cours indiqué (CourseDirectory.course_id, ou --course).")
        self.course_path = os.path.join(self.root, course)
        self.inbound_path = os.path.join(self.course_path, "inbound")
        if not os.path.isdir(self.inbound_path):
            self.fail(f"Cours introuvable dans l'échange ({self.inbound_path}).")
        if not check_mode(self.inbound_path, read=True, execute=True):
            self.fail(f"Dossier de l'échange illisible ({self.inbound_path}).")
        self.duedate = None
        with _gradebook(self.coursedir, course) as gb:
            if gb is not None:
                with suppress(MissingEntry):
                    self.duedate = gb.find_assignment(assignment).duedate
            self.expected = assignment_notebooks(self.coursedir, gb)
        self.set_aside = []
        registers = class_registers(self.coursedir.db_url)
        own: dict[str, list[dict]] = {}
        folders = f"{self.coursedir.student_id or '*'}+{glob.escape(assignment)}+*"
        for path in sorted(glob.glob(os.path.join(glob.escape(self.inbound_path), folders))):
            name = os.path.basename(path)
            student, *parts = name.rsplit("+", 3)
            try:
                claimed = parse_utc(parts[1])
            except (IndexError, ValueError, OverflowError):
                self.set_aside.append(SetAside(name, "nom de dépôt illisible"))
                continue
            erased = erased_problem(student, registers)  # RGPD: left in the exchange, not kept
            problem = erased or id_problem(student)
            problem = problem or ownership_problem(Path(path), student, self.check_owner)
            if not problem:
                try:
                    deposit = self._deposit_seen(Path(path))
                except OSError as exc:  # changed since it was checked
                    problem = f"illisible ({french_reason(exc)})"
            if problem:
                self.set_aside.append(SetAside(name, problem, keep=not erased))
                continue
            # the owner checked above: the copier reads only what still belongs to them
            uid = os.lstat(path).st_uid if self.check_owner else None
            record = {"username": student, "filename": name, "timestamp": deposit}
            own.setdefault(student, []).append({**record, "claimed": claimed, "uid": uid})
        self.src_records = [self._choose(records) for records in own.values()]

    def _deposit_seen(self, path: Path) -> datetime.datetime:
        """The deposit time of a folder as listed (lstat): to choose among a student's copies;
        the copied files' own change times, read on their descriptors, date the copy."""
        seen = [path, *(e for e in path.iterdir() if is_notebook(e.name, self.expected))]
        return _utc(max(entry.lstat().st_ctime for entry in seen))

    def _choose(self, records: list[dict]) -> dict:
        """nbgrader's rule: the newest copy, or the newest before the due date if asked."""
        records = self._sort_by_timestamp(records)
        if self.duedate is not None and self.before_duedate:
            records = [r for r in records if r["timestamp"] <= self.duedate] or records
        return records[0]

    def _modes(self) -> tuple[int, int]:
        """(folder, file) modes of a collected copy: the instructor's alone, or their group's."""
        return (0o2770, 0o660) if self.coursedir.groupshared else (0o700, 0o600)

    def copy_files(self) -> None:
        names = (self.coursedir.assignment_id, self.coursedir.course_id)
        if not self.src_records:
            self.log.warning("No submissions of '%s' for course '%s' to collect", *names)
        else:
            count = len(self.src_records)
            self.log.info("Processing %d submissions of '%s' for course '%s'", count, *names)
        todo = [(record, dest) for record in self.src_records if (dest := self._planned(record))]
        if todo:
            self._copy_all(todo)
        self._report_set_aside()

    def _planned(self, record: dict) -> Path | None:
        """nbgrader's rule: where to copy, or None (its log line said: the summary reads it)."""
        student, dirs = record["username"], self.coursedir
        dest = Path(dirs.format_path(dirs.submitted_directory, student, dirs.assignment_id))
        if not dest.is_dir():
            return dest
        try:
            existing = self.coursedir.get_existing_timestamp(str(dest))
        except Exception:  # an unreadable timestamp: the new copy is taken for newer
            existing = None
        new = record["timestamp"]
        if (self.update and (existing is None or new > existing)) or (
            self.before_duedate and existing != new
        ):
            return dest
        self._said("unchanged" if self.update else "already", student)
        return None

    def _copy_all(self, todo: list[tuple[dict, Path]]) -> None:
        """The chosen copies staged by the confined copier in ``submitted/``, then placed here."""
        submitted = self.coursedir.format_path(self.coursedir.submitted_directory, ".", ".")
        root = Path(os.path.normpath(submitted))
        root.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=".ramassage-", dir=root))
        try:
            try:
                results = self._stage(todo, staging)
            except OSError as exc:
                self.set_aside += [SetAside(r["filename"], french_reason(exc)) for r, _ in todo]
                return
            for (record, dest), result in zip(todo, results, strict=True):
                self._place(record, dest, result, staging / result["out"])
        finally:
            shutil.rmtree(staging, ignore_errors=True)

    def _stage(self, todo: list[tuple[dict, Path]], staging: Path) -> list[dict]:
        return self._copier(self._job(todo, staging))  # between the check and the copy

    def _job(self, todo: list[tuple[dict, Path]], staging: Path) -> dict:
        """What the copier is asked: the chosen folders, by their names in ``inbound/``."""
        dir_mode, file_mode = self._modes()
        return {
            "inbound": self.inbound_path,
            "staging": str(staging),
            "confine": self.confined,
            "notebooks": sorted(self.expected) if self.expected is not None else None,
            "limit": 1000 * int(self.coursedir.max_file_size),  # nbgrader's unit: kB
            "file_mode": file_mode,
            "dir_mode": dir_mode,
            "items": [
                {"folder": record["filename"], "uid": record["uid"], "out": str(i)}
                for i, (record, _) in enumerate(todo)
            ],
        }

    def _copier(self, job: dict) -> list[dict]:
        """The confined copier's results on `job`, whether it was confined said in the log."""
        answer = run_copier(job)
        if (confinement := answer["confinement"])["applied"]:
            self.log.info("%s (Landlock, ABI %d)", CONFINED, confinement["abi"])
        else:
            self.log.warning("%s%s", UNCONFINED_LEAD, confinement["why"])
        return answer["results"]

    def _place(self, record: dict, dest: Path, result: dict, staged: Path) -> None:
        """One staged copy dated and renamed into place, or set aside with the copier's why."""
        problem, error, updating = result["problem"], result["write_error"], dest.is_dir()
        if not (problem or error):
            # the folder's name holds the same claim when the copy had no timestamp.txt
            claimed = result["claimed"] or _utc_text(record["claimed"], self.timestamp_format)
            try:
                self._install(staged, dest, _utc(result["deposit"]), claimed)
            except OSError as exc:
                error = french_reason(exc)
        if problem or error:
            reason = problem or f"copie impossible dans {dest.parent} ({error})"
            self.set_aside.append(SetAside(record["filename"], reason))
            return
        self._said("updated" if updating else "collected", record["username"])
        if ignored := result["ignored"]:  # the student's names: shown, no forged log line
            folder, names = shown(record["filename"]), shown(", ".join(ignored))
            self.log.warning("%s%s%s%s", IGNORED_LEAD, folder, IGNORED_SEP, names)

    def _install(self, staged: Path, dest: Path, deposit: datetime.datetime, claimed: str) -> None:
        """The staged copy, dated, renamed into place; an earlier one goes once it is replaced."""
        file_mode = self._modes()[1]
        write_new(staged, TIMESTAMP, _utc_text(deposit, self.timestamp_format).encode(), file_mode)
        if claimed:  # an empty claim (Exchange.timestamp_format = "") is no claim
            write_new(staged, CLAIMED_TIMESTAMP, claimed.encode(), file_mode)
        dest.parent.mkdir(parents=True, exist_ok=True)
        if not dest.exists():
            os.rename(staged, dest)
            return
        old = Path(tempfile.mkdtemp(prefix=f".{dest.name}-ancien-", dir=dest.parent))
        os.rename(dest, old / dest.name)
        try:
            os.rename(staged, dest)
        except OSError:  # the earlier copy back in its place
            os.rename(old / dest.name, dest)
            old.rmdir()
            raise
        shutil.rmtree(old)

    def _said(self, kind: str, student: str) -> None:
        lead = COLLECT_LINES[kind]
        self.log.info("%s%s%s %s", lead, LEAD_SEP, student, self.coursedir.assignment_id)

    def _keep_all(self) -> None:
        """The set-aside folders copied into the quarantine by the confined copier (the rest named
        in ``NON_COPIES.txt``, never read); a link is named, not followed; never an erased one."""
        root = Path(self.coursedir.root) / self.quarantine_directory / self.coursedir.assignment_id
        inbound, dir_mode = Path(self.inbound_path), self._modes()[0]
        todo = []
        for item in [item for item in self.set_aside if item.keep]:
            dest, src = root / item.name, inbound / item.name
            try:
                if not dest.exists():
                    root.mkdir(parents=True, exist_ok=True)
                    os.chmod(root, dir_mode)
                    if src.is_dir() and not src.is_symlink():
                        todo.append(item)
                        continue
                    target = os.readlink(src) if src.is_symlink() else "?"
                    dest.mkdir(mode=dir_mode)
                    _write_lines(dest / "LIEN.txt", [f"{item.name} -> {target}"])
                    _write_lines(dest / DEPOSITED_BY, depositors(src))
                item.kept = dest
            except OSError as exc:
                item.reason += f" (copie impossible\u00a0: {french_reason(exc)})"
        if not todo:
            return
        staging = Path(tempfile.mkdtemp(prefix=".ramassage-", dir=root))
        try:
            items = [
                {"folder": item.name, "uid": None, "out": str(i), "keep": True}
                for i, item in enumerate(todo)
            ]
            try:
                results = self._copier({**self._job([], staging), "items": items})
            except OSError as exc:  # the copier's own failure, already in French
                results = [{"problem": french_reason(exc)}] * len(todo)
            for item, result in zip(todo, results, strict=True):
                why = result["problem"] or result["write_error"]
                try:
                    if not why:
                        dest = root / item.name
                        os.rename(staging / result["out"], dest)
                        _write_lines(dest / DEPOSITED_BY, depositors(inbound / item.name))
                        item.kept = dest
                        if result["skipped"]:
                            _write_lines(dest / "NON_COPIES.txt", result["skipped"])
                except OSError as exc:
                    why = french_reason(exc)
                if why:
                    item.reason += f" (copie impossible\u00a0: {why})"
        finally:
            shutil.rmtree(staging, ignore_errors=True)

    def _report_set_aside(self) -> None:
        if not self.set_aside:
            return
        self._keep_all()
        lines = [
            f"{len(self.set_aside)} copie(s) de {quoted(self.coursedir.assignment_id)} mise(s) de "
            "côté, non collectée(s)\u00a0:"
        ]
        for item in self.set_aside:
            kept = f"gardée dans {item.kept}" if item.kept else "laissée dans l'échange"
            lines.append(shown(f"  - {item.name}\u00a0: {item.reason}\u00a0; {kept}"))
        lines.append(
            "Les autres copies sont collectées. Une copie déposée au nom d'un autre élève ne "
            "remplace jamais la sienne."
        )
        self.fail("\n".join(lines))


class CheckedReleaseFeedback(_ExchangeRoot, ExchangeReleaseFeedback):
    """nbgrader's feedback release of the notebooks' ``.html`` only, read without following links;
    a student without a usable ``submission_secret.txt`` is named, left out; the command fails."""

    def copy_files(self) -> None:
        excluded = set(filter(None, self.coursedir.student_id_exclude.split(",")))
        with _gradebook(self.coursedir, self.coursedir.course_id) as gb:
            expected = assignment_notebooks(self.coursedir, gb)
        problems: list[str] = []
        # the pages are the course owner's (whoever runs the release: root may, for them)
        feedback = self.coursedir.format_path(self.coursedir.feedback_directory, ".", ".")
        me = os.stat(feedback).st_uid if os.path.isdir(feedback) else os.getuid()
        for folder in sorted(glob.glob(self.src_path)):  # feedback/<student>/<assignment>
            student = Path(folder).parent.name
            if student in excluded:
                continue
            try:
                self._release_one(student, folder, expected, me)
            except (Unsafe, OSError) as exc:  # Unsafe: already in French
                problems.append(f"  - {quoted(student)}\u00a0: {french_reason(exc)}")
        if problems:
            head = f"{len(problems)} {LEFT_OUT} (les autres l'ont)\u00a0:"
            self.fail("\n".join([head, *problems]))

    def _release_one(self, student: str, folder: str, expected: set[str] | None, me: int) -> None:
        fd = open_dir(folder)
        try:
            pages = {}
            for name in sorted(os.listdir(fd)):
                if name.endswith(".html") and is_notebook(name[:-5] + ".ipynb", expected):
                    pages[name[:-5]], _ = read_regular(fd, name, me, _PAGE_LIMIT, _owner_text)
            if not pages:
                return
            try:
                secret, _ = read_regular(fd, SECRET, me, SMALL, _owner_text)
            except Unsafe as exc:
                raise Unsafe(f"pas de secret de dépôt lisible ({exc})") from exc
            if not secret.strip():
                raise Unsafe(f"secret de dépôt vide ({SECRET})")
            stamp = read_optional(fd, TIMESTAMP, me, SMALL)
        finally:
            os.close(fd)
        timestamp = stamp.decode("utf-8", "replace").strip() if stamp else ""
        key = secret.decode("utf-8", "surrogateescape")
        out = Path(self.dest_path)
        course, assignment = self.coursedir.course_id, self.coursedir.assignment_id
        for notebook, data in pages.items():
            checksum = notebook_hash(secret=key, notebook_id=notebook)
            self.log.info(_RELEASING, student, course, assignment, notebook, timestamp)
            tmp = Path(tempfile.mkdtemp(prefix=".page-", dir=out))
            try:
                write_new(tmp, "page.html", data, 0o644)  # the student reads it
                os.replace(tmp / "page.html", out / f"{checksum}.html")
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
