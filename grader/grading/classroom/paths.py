"""Where the course's grading folders are, found the way nbgrader finds its configuration.

From the current folder, never this file (an instructor may run the tools on another course):
the *grader folder* is the current folder if it holds ``nbgrader_config.py``, else its
``grader/``, else the current folder if Jupyter's configuration path has one; the root,
``submitted/`` and the gradebook come from nbgrader's own ``CourseDirectory``."""

from __future__ import annotations

import errno
import glob
import os
import stat
from collections.abc import Iterable
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..french.system_reason import GradingError
from .gradebook import sqlite_path, sqlite_url

if TYPE_CHECKING:
    from traitlets.config import Config

__all__ = [
    "DEMO_FOLDER",
    "DEMO_MARKER",
    "CONFIG",
    "MAX_DEPTH",
    "TOO_DEEP",
    "TOO_LONG",
    "QUARANTINE",
    "CourseDirs",
    "course_dirs",
    "files_under",
    "find_grader_dir",
    "grader_path",
    "is_demo",
    "load_config",
    "no_course",
    "not_regular",
    "root_problem",
    "strange",
    "TooDeep",
    "tree",
]

CONFIG = "nbgrader_config.py"
# OwnerCheckedCollect.quarantine_directory's default, relative to the root
QUARANTINE = "grader/quarantaine"


def _jupyter_configs() -> list[Path]:
    # this module stays light: nbgrader_config.py (every nbgrader command) imports it
    from jupyter_core.paths import jupyter_config_path

    return [Path(d) / CONFIG for d in jupyter_config_path() if (Path(d) / CONFIG).is_file()]


def find_grader_dir(start: str | os.PathLike[str] | None = None) -> Path:
    """The folder where nbgrader runs for this course, searched from `start` (default: cwd)."""
    start = Path.cwd() if start is None else Path(start)
    for candidate in (start, start / "grader"):
        if (candidate / CONFIG).is_file():
            return candidate.resolve()
    if _jupyter_configs():
        return start.resolve()
    raise FileNotFoundError(
        f"Aucun {CONFIG} dans {start} ni dans {start / 'grader'} (ni dans la configuration "
        "Jupyter) : lancez la commande depuis la racine du cours ou depuis son dossier "
        "grader/, ou donnez les chemins (--grader-dir, --db, --out)."
    )


# make demo-grading's own course, in grader/demo: its configuration starts with DEMO_MARKER
DEMO_FOLDER = "demo"
DEMO_MARKER = '"""Demo course of make demo-grading (grading.demo), generated and safe to delete."""'


def is_demo(folder: Path) -> bool:
    """Whether `folder` is make demo-grading's course (its samples, none a learner's)."""
    config = folder / CONFIG
    with suppress(OSError, UnicodeDecodeError):
        return config.is_file() and config.read_text(encoding="utf-8").startswith(DEMO_MARKER)
    return False


@dataclass(frozen=True)
class CourseDirs:
    """Every folder of one class, located once (nothing else rebuilds these paths)."""

    grader_dir: Path  # where nbgrader runs (and reads nbgrader_config.py)
    root: Path  # CourseDirectory.root
    submitted: Path  # absolute, like every folder below
    db_url: str
    autograded: Path
    feedback: Path
    source: Path
    release: Path
    downloaded: Path  # ZipCollectApp.downloaded_directory
    quarantine: Path  # OwnerCheckedCollect.quarantine_directory
    # the configuration these were read from (load_config), read once: the teacher's
    # nbgrader_config.py is a program, run again by every second reading
    config: Config | None = field(default=None, repr=False, compare=False)

    @property
    def report(self) -> Path:  # reports and nbgrader's logs
        return self.grader_dir / "rapport"

    @property
    def exports(self) -> Path:  # learners' data exports
        return self.grader_dir / "exports"

    @property
    def backups(self) -> Path:  # the default folder of backups
        return self.grader_dir / "sauvegardes"

    def log_file(self, name: str) -> Path:
        """``rapport/<name>.log`` (folder made if need be): an nbgrader command's English log."""
        if not self.grader_dir.is_dir():
            raise no_course(self.grader_dir)
        self.report.mkdir(exist_ok=True)
        return self.report / f"{name}.log"


def no_course(grader_dir: Path) -> FileNotFoundError:
    """What a command says of a grader/ folder that is not there (``--grader-dir`` mistyped)."""
    return FileNotFoundError(f"dossier du cours introuvable\u00a0: {grader_dir}")


def root_problem(root: Path) -> str | None:
    """Why nbgrader cannot work in the course folder `root`, in French, or None: nbgrader finds
    notebooks with a glob of its path, where « [2024] » is a pattern that matches another
    folder or none, and « ? » or « * » match a neighbour too (« cours 2 » beside « cours ? »)."""
    if not glob.has_magic(str(root)) or glob.glob(str(root)) == [str(root)]:
        return None
    return (
        f"Le chemin du cours contient «\u00a0[\u00a0», «\u00a0?\u00a0» ou «\u00a0*\u00a0» "
        f"({root})\u00a0: nbgrader y lit un motif qui ne désigne pas ce seul dossier. Renommez "
        "ou déplacez le dossier du cours (sans ces signes), puis relancez. Rien n'a été fait."
    )


# levels of folders under grader/, the class's folder: deeper is a trap (1,100 levels of « a/ »
# made Python 3.11's os.walk and rglob fail with RecursionError, for the whole class), never
# work. Each walk counts from grader/ (`levels`: how deep its root is), so what make grade
# accepts, make sauvegarde, the export and the erasure walk whole.
MAX_DEPTH = 32
TOO_DEEP = f"plus de {MAX_DEPTH} niveaux de dossiers imbriqués sous grader/"


TOO_LONG = "chemin trop long pour le système"


class TooDeep(GradingError):
    """A folder of the class holds more than MAX_DEPTH levels of folders, or a path longer than
    the system takes (ENAMETOOLONG): a trap, whose files no walk can read."""

    def __init__(self, folder: Path, why: str = TOO_DEEP) -> None:
        super().__init__(
            f"{folder}\u00a0: {why}, non parcouru. Déplacez ce dossier hors du cours (ou "
            "supprimez-le), puis relancez."
        )
        self.folder, self.why = folder, why


def tree(
    folder: Path, levels: int = 1, passed: list[tuple[Path, str]] | None = None
) -> list[tuple[str, Path, int]]:
    """(path under `folder`, path, file type from ``lstat``, 0 if unreadable) of every entry
    under `folder` (`levels` below grader/), sorted; links never followed, no recursion.

    A folder past MAX_DEPTH levels below grader/, or past the system's path length, raises
    TooDeep; given `passed`, it is listed there with why (and so is an unreadable folder), and
    the walk goes on: the backup saves the rest of the class and names it."""
    found, stack = [], [(folder, "", levels)]

    def pass_over(path: Path, why: str) -> None:  # a trap: named in `passed`, else TooDeep
        if passed is None:
            raise TooDeep(path, why) from None  # not the OSError it stands for
        passed.append((path, why))

    while stack:
        base, prefix, depth = stack.pop()
        try:
            names = os.listdir(base)
        except OSError as exc:
            if exc.errno == errno.ENAMETOOLONG:  # its files would be left out, unsaid
                pass_over(base, TOO_LONG)
            elif exc.errno not in (errno.ENOENT, errno.ENOTDIR) and passed is not None:
                passed.append((base, "illisible"))  # gone, or never was: nothing to say
            continue
        for name in names:
            path, rel = base / name, f"{prefix}{name}"
            try:
                mode = stat.S_IFMT(path.lstat().st_mode)
            except OSError as exc:
                if exc.errno == errno.ENAMETOOLONG:
                    pass_over(path, TOO_LONG)
                    continue
                mode = 0  # unreadable: named by who cares (strange), never a file
            if mode == stat.S_IFDIR and depth + 1 > MAX_DEPTH:
                pass_over(path, TOO_DEEP)
                continue
            found.append((rel, path, mode))
            if mode == stat.S_IFDIR:
                stack.append((path, f"{rel}/", depth + 1))
    return sorted(found, key=lambda entry: entry[1])


def files_under(folder: Path, levels: int = 1) -> list[tuple[str, Path]]:
    """(path under `folder`, file) of each of its files (`levels`: as `tree`); a link is never
    followed out of it."""
    return [(rel, path) for rel, path, mode in tree(folder, levels) if mode == stat.S_IFREG]


# what an entry that is neither a folder nor a plain file is, in French (``stat.S_IFMT``)
_KINDS = {
    stat.S_IFIFO: "tube nommé, fifo",
    stat.S_IFSOCK: "socket",
    stat.S_IFCHR: "périphérique",
    stat.S_IFBLK: "périphérique",
}


def strange(path: Path, guarded: frozenset[tuple[int, int]] = frozenset()) -> str | None:
    """What `path` is, in French, when it is no folder or plain file: a link (never followed:
    nbgrader would copy its target, the gradebook or ``/etc/shadow``, as the student's), a fifo,
    a device, a file unreadable, or a `guarded` file ((device, inode): the gradebook) under
    another name; None for a folder or a plain file. Other hard links are plain files: a
    teacher's ``cp -al`` makes them, a student cannot link a file not theirs
    (protected_hardlinks; collects copy)."""
    try:
        info = path.lstat()
    except OSError:
        return "illisible"
    mode = stat.S_IFMT(info.st_mode)
    if mode == stat.S_IFREG and (info.st_dev, info.st_ino) in guarded:
        return "le carnet de notes lui-même, sous un autre nom (lien physique)"
    if mode == stat.S_IFLNK:
        return f"lien symbolique vers «\u00a0{os.readlink(path)}\u00a0», non suivi"
    if mode in (stat.S_IFDIR, stat.S_IFREG):
        return None
    return _KINDS.get(mode, "fichier spécial")


def not_regular(
    folder: Path, guarded: Iterable[Path] = (), levels: int = 1
) -> list[tuple[str, str]]:
    """(path under `folder`, what it is in French) of each entry of `folder` (itself as ``.``)
    that is no folder or plain file (``strange``), or a folder not walked (too deep, a path
    too long, unreadable)."""
    guarded_ids = set()
    for path in guarded:
        with suppress(OSError):
            info = path.stat()
            guarded_ids.add((info.st_dev, info.st_ino))
    ids = frozenset(guarded_ids)
    if not os.path.lexists(folder):
        return []
    if (what := strange(folder, ids)) is not None:
        return [(".", what)]
    if not folder.is_dir():
        return []
    passed: list[tuple[Path, str]] = []
    found = [
        (rel, what)
        for rel, path, mode in tree(folder, levels, passed)
        if mode != stat.S_IFDIR and (what := strange(path, ids)) is not None
    ]
    found += [(path.relative_to(folder).as_posix(), f"{why}, non parcouru") for path, why in passed]
    return sorted(found)


def load_config(grader_dir: str | os.PathLike[str]) -> Config:
    """The configuration nbgrader started in `grader_dir` reads (Jupyter's, then its own)."""
    # traitlets and nbgrader only when a command reads its configuration (see _jupyter_configs)
    from traitlets.config import Config
    from traitlets.config.loader import PyFileConfigLoader

    grader = Path(grader_dir).resolve()
    config = Config()
    files = _jupyter_configs() + [grader / CONFIG]
    for path in dict.fromkeys(p.resolve() for p in files if p.is_file()):
        config.merge(PyFileConfigLoader(path.name, path=str(path.parent)).load_config())
    return config


def grader_path(grader_dir: str | os.PathLike[str] | None = None) -> Path:
    """The class's grader/ folder: `grader_dir` as given (``--grader-dir``), else found."""
    return find_grader_dir() if grader_dir is None else Path(grader_dir).resolve()


def course_dirs(grader_dir: str | os.PathLike[str] | None = None) -> CourseDirs:
    """The course's folders as nbgrader, started in `grader_dir`, would configure them."""
    from nbgrader.coursedir import CourseDirectory  # as in load_config

    grader = grader_path(grader_dir)
    config = load_config(grader)
    # nbgrader resolves relative paths against the folder it runs in: here, grader_dir.
    cd_config = config.CourseDirectory
    cd_config.root = str((grader / cd_config.get("root", ".")).resolve())
    db_file = sqlite_path(cd_config.get("db_url", ""))
    if db_file is not None and not db_file.is_absolute():
        cd_config.db_url = sqlite_url((grader / db_file).resolve())
    coursedir = CourseDirectory(config=config)
    root = Path(coursedir.root)
    if problem := root_problem(root):
        raise GradingError(problem)
    own = ("submitted", "autograded", "feedback", "source", "release")
    return CourseDirs(
        grader_dir=grader,
        root=root,
        db_url=coursedir.db_url,
        **{key: root / getattr(coursedir, f"{key}_directory") for key in own},
        downloaded=root / config.ZipCollectApp.get("downloaded_directory", "downloaded"),
        quarantine=root / config.OwnerCheckedCollect.get("quarantine_directory", QUARANTINE),
        config=config,
    )
