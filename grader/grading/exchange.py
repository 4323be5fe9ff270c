"""``nbgrader collect`` that never takes one student's copy for another's.

nbgrader 0.9.6 accepts ``nbgrader submit oublier --student bob`` from any user and its collect
only *warns* when the folder's owner is not the student it names (``check_owner``); the newest
copy wins, so eve's copy becomes bob's, and formgrader's Collect (``update=True``) even replaces
bob's already-collected work with it. A student can also leave in the exchange a folder whose
name nbgrader cannot parse (collect then stops for the whole class) or a symbolic link that the
instructor's collect would follow.

``OwnerCheckedCollect`` replaces the exchange's collect class (``c.ExchangeFactory.collect`` in
``nbgrader_config.py``), so ``make collect``, a raw ``nbgrader collect`` and formgrader's Collect
button all use it. Only copies whose every file belongs to the student they name are candidates;
among those, nbgrader's own rule picks the newest (a student's resubmission still replaces the
earlier one). Every other copy is *set aside*: copied, never followed through a link, into
``grader/quarantaine/<assignment>/`` (the exchange keeps its own), named in French in the log,
and the command fails (exit status 1, formgrader shows the log), after everyone else has been
collected.

Owners are named as nbgrader names users (``pwd``); on Kubernetes, where the pods' uids have no
passwd entry, from ``COURSE_HUB_PASSWD`` (``name:uid,...``, set by the hub's hook for
instructors) when nss_wrapper did not already give them one. An owner without a name is not the
student: the copy is set aside.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path

from nbgrader.api import Gradebook, MissingEntry
from nbgrader.exchange.default.collect import ExchangeCollect
from nbgrader.utils import check_mode, parse_utc
from traitlets import Unicode

from .erasure_register import class_registers, erased_problem
from .ids import id_problem, normalize_id, quoted
from .system_reason import french_reason

__all__ = ["OwnerCheckedCollect", "SetAside", "class_uids", "owner_name", "ownership_problem"]

PASSWD_ENV = "COURSE_HUB_PASSWD"


def class_uids(value: str | None = None) -> dict[int, str]:
    """uid -> hub user name from ``COURSE_HUB_PASSWD`` ("name:uid,name:uid")."""
    value = os.environ.get(PASSWD_ENV, "") if value is None else value
    names: dict[int, str] = {}
    for entry in value.split(","):
        name, _, uid = entry.strip().rpartition(":")
        if name and uid.isdigit():
            names[int(uid)] = name
    return names


def owner_name(uid: int) -> str | None:
    """The user name of `uid`, as nbgrader's exchange names users; None when it has none."""
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return class_uids().get(uid)


def _owner_text(uid: int) -> str:
    name = owner_name(uid)
    return f"«\u00a0{name}\u00a0»" if name else f"l'uid {uid}, sans nom sur cette machine"


def ownership_problem(path: Path, student: str, check_owner: bool = True) -> str | None:
    """Why the exchange folder `path` is not `student`'s own copy (French), or None.

    The folder and everything in it must be real folders and files (no link, no device)
    owned by the user named `student`.
    """
    want = normalize_id(student)
    try:
        entries = [path, *sorted(path.rglob("*"))]
    except OSError as exc:
        return f"illisible ({french_reason(exc)})"
    for entry in entries:
        try:
            info = entry.lstat()
        except OSError as exc:
            return f"illisible ({french_reason(exc)})"
        where = "le dossier" if entry == path else f"«\u00a0{entry.relative_to(path)}\u00a0»"
        if stat.S_ISLNK(info.st_mode):
            return f"{where} est un lien symbolique"
        if not (stat.S_ISDIR(info.st_mode) or stat.S_ISREG(info.st_mode)):
            return f"{where} n'est ni un dossier ni un fichier"
        if not check_owner:
            continue
        name = owner_name(info.st_uid)
        if name is None or normalize_id(name) != want:
            return f"{where} appartient à {_owner_text(info.st_uid)}, pas à «\u00a0{student}\u00a0»"
    return None


@dataclass
class SetAside:
    """A copy of the exchange that was not collected, and where it was kept."""

    name: str  # its folder name in the exchange's inbound
    reason: str
    kept: Path | None
    keep: bool = True  # an erased learner's copy is never copied into the course


class OwnerCheckedCollect(ExchangeCollect):
    """nbgrader's collect, restricted to copies owned by the student they name."""

    quarantine_directory = Unicode(
        "grader/quarantaine",
        help="Where copies not collected are kept (relative to CourseDirectory.root).",
    ).tag(config=True)

    set_aside: list[SetAside]

    def _records(self) -> list[str]:
        student = self.coursedir.student_id or "*"
        assignment = glob.escape(self.coursedir.assignment_id)
        pattern = os.path.join(glob.escape(self.inbound_path), f"{student}+{assignment}+*")
        return sorted(glob.glob(pattern))

    def init_src(self) -> None:
        if self.coursedir.student_id and self.coursedir.student_id != "*":
            self.coursedir.student_id = normalize_id(self.coursedir.student_id)
        # nbgrader's own checks, without its choice of copies (one unparsable folder name would
        # stop it for the whole class)
        if self.coursedir.course_id == "":
            self.fail("Aucun cours indiqué (CourseDirectory.course_id, ou --course).")
        self.course_path = os.path.join(self.root, self.coursedir.course_id)
        self.inbound_path = os.path.join(self.course_path, "inbound")
        if not os.path.isdir(self.inbound_path):
            self.fail(f"Cours introuvable dans l'échange ({self.inbound_path}).")
        if not check_mode(self.inbound_path, read=True, execute=True):
            self.fail(f"Dossier de l'échange illisible ({self.inbound_path}).")
        with Gradebook(self.coursedir.db_url, self.coursedir.course_id) as gb:
            try:
                self.duedate = gb.find_assignment(self.coursedir.assignment_id).duedate
            except MissingEntry:
                self.duedate = None
        self.set_aside = []
        registers = class_registers(self.coursedir.db_url)
        own: dict[str, list[dict]] = {}
        for path in self._records():
            name = os.path.basename(path)
            parts = name.rsplit("+", 3)
            try:
                if len(parts) < 3:
                    raise ValueError(name)
                record = {"username": parts[0], "filename": name, "timestamp": parse_utc(parts[2])}
            except (ValueError, OverflowError):
                self.set_aside.append(SetAside(name, "nom de dépôt illisible", None))
                continue
            problem = id_problem(parts[0]) or ownership_problem(
                Path(path), parts[0], self.check_owner
            )
            erased = erased_problem(parts[0], registers)  # RGPD: left in the exchange, not kept
            if erased:
                self.set_aside.append(SetAside(name, erased, None, keep=False))
                continue
            if problem:
                self.set_aside.append(SetAside(name, problem, None))
                continue
            own.setdefault(record["username"], []).append(record)
        self.src_records = [self._choose(records) for records in own.values()]

    def _choose(self, records: list[dict]) -> dict:
        """nbgrader's rule: the newest copy, or the newest before the due date if asked."""
        records = self._sort_by_timestamp(records)
        if self.duedate is not None and self.before_duedate:
            before = [r for r in records if r["timestamp"] <= self.duedate]
            if before:
                return before[0]
        return records[0]

    def _keep(self, item: SetAside) -> None:
        """Copy a set-aside folder into the quarantine, links copied as links, never followed."""
        if not item.keep:
            return
        root = Path(self.coursedir.root) / self.quarantine_directory / self.coursedir.assignment_id
        dest = root / item.name
        src = Path(self.inbound_path) / item.name
        try:
            if not dest.exists():
                root.mkdir(parents=True, exist_ok=True)
                if src.is_symlink() or not src.is_dir():
                    dest.mkdir()
                    (dest / "LIEN.txt").write_text(
                        f"{item.name} -> {os.readlink(src) if src.is_symlink() else '?'}\n",
                        encoding="utf-8",
                    )
                else:
                    shutil.copytree(src, dest, symlinks=True)
            item.kept = dest
        except OSError as exc:
            item.reason += f" (copie impossible\u00a0: {french_reason(exc)})"

    def copy_files(self) -> None:
        # every copy left was checked above; nbgrader's own check only warns, by pwd alone
        check_owner, self.check_owner = self.check_owner, False
        try:
            super().copy_files()
        finally:
            self.check_owner = check_owner
        if not self.set_aside:
            return
        for item in self.set_aside:
            self._keep(item)
        lines = [
            f"{len(self.set_aside)} copie(s) de {quoted(self.coursedir.assignment_id)} mise(s) de "
            "côté, non collectée(s)\u00a0:"
        ]
        for item in self.set_aside:
            kept = f"gardée dans {item.kept}" if item.kept else "laissée dans l'échange"
            lines.append(f"  - {item.name}\u00a0: {item.reason}\u00a0; {kept}")
        lines.append(
            "Les autres copies sont collectées. Une copie déposée au nom d'un autre élève ne "
            "remplace jamais la sienne."
        )
        self.fail("\n".join(lines))
