"""Where the course's grading folders are, found the way nbgrader finds its configuration.

The tools start from the current folder, never their own file (an instructor may run them on
another course): the *grader folder* is the current folder if it holds ``nbgrader_config.py``,
else its ``grader/``, else the current folder if Jupyter's configuration path has one. The
root, ``submitted/`` and the gradebook come from nbgrader's own ``CourseDirectory``.
"""

from __future__ import annotations

import os
import sqlite3
import stat
from collections.abc import Iterable
from contextlib import closing, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import parse_qsl, quote, unquote

from ..french.system_reason import GradingError

if TYPE_CHECKING:
    from traitlets.config import Config

__all__ = [
    "DEMO_FOLDER",
    "DEMO_MARKER",
    "CONFIG",
    "QUARANTINE",
    "CourseDirs",
    "GradebookError",
    "course_dirs",
    "files_under",
    "find_grader_dir",
    "gradebook_counts",
    "gradebook_problem",
    "gradebook_rows",
    "is_demo",
    "load_config",
    "not_regular",
    "read_only",
    "root_problem",
    "server_name",
    "sqlite_copy",
    "sqlite_path",
    "sqlite_url",
]

CONFIG = "nbgrader_config.py"
# OwnerCheckedCollect.quarantine_directory's default, relative to the root
QUARANTINE = "grader/quarantaine"


def _jupyter_configs() -> list[Path]:
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
    config = folder / "nbgrader_config.py"
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
            raise FileNotFoundError(f"dossier du cours introuvable\u00a0: {self.grader_dir}")
        self.report.mkdir(exist_ok=True)
        return self.report / f"{name}.log"


def sqlite_path(db_url: str) -> Path | None:
    """The file of a ``sqlite:///`` URL as SQLAlchemy reads it (what follows a « ? » is options,
    « %3F » is a « ? »), None for any other database."""
    prefix = "sqlite:///"
    if not db_url.startswith(prefix):
        return None
    return Path(unquote(db_url[len(prefix) :].partition("?")[0]))


def sqlite_url(path: Path) -> str:
    """The ``sqlite:///`` URL of the file `path`, quoted: a « ? » or a « # » in a folder's name
    (« cours ? ») stays part of the name, as SQLAlchemy reads it."""
    return f"sqlite:///{quote(str(path))}"


def root_problem(root: Path) -> str | None:
    """Why nbgrader cannot work in the course folder `root`, in French, or None: nbgrader finds
    notebooks with a glob of its path, where « [2024] » is a pattern that matches no folder."""
    if "[" not in str(root):
        return None
    return (
        f"Le chemin du cours contient un crochet ({root})\u00a0: nbgrader y lit un motif et ne "
        "trouve aucun notebook. Renommez ou déplacez le dossier du cours (sans «\u00a0[\u00a0»), "
        "puis relancez. Rien n'a été fait."
    )


def read_only(path: Path) -> sqlite3.Connection:
    """The SQLite file `path`, opened read-only (through a URI: ``?`` or ``#`` in a name stays
    part of the name)."""
    return sqlite3.connect(f"file:{quote(str(path))}?mode=ro", uri=True, timeout=60)


def sqlite_copy(source: Path, dest: Path) -> None:
    """A consistent copy of the SQLite file `source`: the online backup API in one step, under
    one read lock (a plain file copy taken while nbgrader writes can be torn)."""
    with closing(read_only(source)) as src, closing(sqlite3.connect(dest)) as dst:
        src.backup(dst)


ENROL = "make students ELEVES=grader/eleves.csv"  # how a class is registered
RESTORE = (
    "make restauration SAUVEGARDE=…, voir «\u00a0Sauvegarder et restaurer\u00a0» dans "
    "grader/README.md"
)


class GradebookError(Exception):
    """The class's gradebook cannot be read, in one French sentence (`reason`: why, alone)."""

    def __init__(self, message: str, reason: str = "") -> None:
        super().__init__(message)
        self.reason = reason or message


STUDENTS = "SELECT id FROM student"
COUNTS = "SELECT (SELECT count(*) FROM student), (SELECT count(*) FROM grade)"


def _sqlite_rows(path: Path, sql: str) -> list:
    if not path.is_file():
        raise GradebookError(f"le carnet de notes est introuvable ({path})")
    if path.stat().st_size == 0:
        raise GradebookError(f"le carnet de notes est vide (0 octet : {path})")
    try:
        with closing(read_only(path)) as con:
            return con.execute(sql).fetchall()
    except sqlite3.Error as exc:
        reason = "pas une base nbgrader" if "no such table" in str(exc) else str(exc)
        raise GradebookError(f"le carnet de notes est illisible ({path} : {reason})") from None


def server_name(db_url: str) -> str:
    """What a message may show of a server's URL: its driver, host, port and database as
    SQLAlchemy reads them, every piece of the password masked; only the driver of a URL it
    cannot read (a forgotten « @ » leaves the password where the host should be)."""
    from sqlalchemy import make_url  # only for a gradebook on a server

    try:
        url = make_url(db_url)
        port = f":{url.port}" if url.port else ""
    except Exception:  # noqa: BLE001 — any URL it cannot read: only what precedes « :// »
        return f"{db_url.partition(':')[0]}://…"
    shown = f"{url.drivername}://{url.host or ''}{port}/{url.database or ''}"
    for secret in _secrets(db_url):
        shown = shown.replace(secret, "***")
    return shown


def _secrets(db_url: str) -> list[str]:
    """Every text of `db_url` that may be its password, longest first: what follows the user's
    « : » up to each « @ » (one may be in the password, typed as is), the query's, as
    SQLAlchemy reads it, and each part of those around « @ ? & / » (a driver names
    « Ecole2024@localhost » the host of ``prof:S3cret@Ecole2024@localhost``)."""
    rest = db_url.partition("://")[2]
    start = rest.find(":") + 1
    found = {rest[start:at] for at, char in enumerate(rest) if char == "@" and start and at > start}
    if start and "@" not in rest:  # a forgotten « @ »: the password runs into the host
        found.add(rest[start:].split("/")[0])
    found |= {value for key, value in parse_qsl(rest.partition("?")[2]) if key == "password"}
    with suppress(Exception):  # a URL SQLAlchemy cannot read: the raw texts above are all
        from sqlalchemy import make_url

        url = make_url(db_url)
        query = url.query.get("password") or ()
        found |= {url.password or "", *([query] if isinstance(query, str) else query)}
    parts = {text for text in found if len(text) > 2}
    for sep in "@?&/":
        parts |= {part for text in parts for part in text.split(sep) if len(part) > 2}
    return sorted(parts, key=len, reverse=True)


def _server_rows(db_url: str, sql: str) -> list | None:
    import sqlalchemy  # only for a gradebook on a server: SQLite files are read with sqlite3

    try:
        engine = sqlalchemy.create_engine(db_url)
        name, driver = engine.dialect.name, engine.dialect.driver
        try:
            if engine.dialect.is_async:  # the tutor's URL copied: nbgrader needs a sync driver
                reason = (
                    f"pilote asynchrone «\u00a0{driver}\u00a0», que nbgrader n'utilise pas "
                    f"(écrivez «\u00a0{name}://\u00a0» au lieu de «\u00a0{name}+{driver}://\u00a0»)"
                )
            else:
                with engine.connect() as con:
                    if not sqlalchemy.inspect(con).has_table("student"):
                        return None
                    return list(con.execute(sqlalchemy.text(sql)).fetchall())
        finally:
            engine.dispose()
    except (sqlalchemy.exc.ArgumentError, ValueError):  # a mistyped port (« :54x »), a scheme
        reason = "adresse illisible\u00a0: vérifiez le pilote, l'hôte, le port et la base"
    except Exception as exc:  # noqa: BLE001 — a missing driver, a server down, a damaged base
        missing = isinstance(exc, ImportError) and exc.name
        # else the driver's own first line: SQLAlchemy's adds the SQL and an sqlalche.me address
        reason = str(getattr(exc, "orig", None) or exc).strip().split("\n")[0]
        reason = f"pilote «\u00a0{exc.name}\u00a0» non installé" if missing else reason
    for secret in _secrets(db_url):
        reason = reason.replace(secret, "***")
    message = f"le carnet de notes est illisible ({server_name(db_url)}\u00a0: {reason})"
    raise GradebookError(message, reason)


def gradebook_rows(db_url: str, sql: str) -> list | None:
    """The rows `sql` reads in the gradebook at `db_url`, never written: a SQLite file opened
    read-only (`read_only`), a server through SQLAlchemy (nbgrader's ``Gradebook`` would create
    its tables in an empty database). None when there is none yet (no file, a database without
    nbgrader's tables); GradebookError, in French and without the URL's password, otherwise."""
    db = sqlite_path(db_url)
    if db is None:
        return _server_rows(db_url, sql)
    return _sqlite_rows(db, sql) if os.path.lexists(db) else None


def gradebook_counts(path: Path) -> dict[str, int]:
    """What gradebook `path` holds that a backup must not lose: its students and its grades;
    GradebookError if missing, empty or unreadable (every class command checks it first)."""
    students, grades = _sqlite_rows(path, COUNTS)[0]
    return {"students": students, "grades": grades}


def gradebook_problem(
    dirs: CourseDirs, missing_ok: bool = False, empty_ok: bool = True
) -> str | None:
    """Why the class's gradebook cannot be used and what to do, in French, or None: missing
    (unless `missing_ok`), empty, damaged (a truncated file), unreadable (a server down),
    registering nobody (unless `empty_ok`). The check is ``make sauvegarde``'s
    (``gradebook_counts``), made before nbgrader or SQLAlchemy read it: they would stop on a
    traceback or an sqlalche.me address, or create an empty gradebook in its place."""
    db = sqlite_path(dirs.db_url)
    fix = f"restaurez la dernière sauvegarde ({RESTORE})"
    if db is None:
        fix = "vérifiez le serveur et CourseDirectory.db_url dans nbgrader_config.py"
    try:
        rows = gradebook_rows(dirs.db_url, COUNTS)
    except GradebookError as exc:
        return f"{exc}\u00a0; {fix}"
    where = server_name(dirs.db_url) if db is None else db
    if rows is None and not missing_ok:
        return (
            f"le carnet de notes est introuvable ({where})\u00a0; {fix} ou, pour une nouvelle "
            f"classe, inscrivez-la d'abord\u00a0: {ENROL}"
        )
    if not empty_ok and rows and rows[0][0] == 0:
        return (
            f"aucun élève n'est inscrit au carnet de notes ({where})\u00a0: inscrivez d'abord la "
            f"classe, {ENROL} (un dossier de submitted/ n'inscrit personne)"
        )
    return None


def files_under(folder: Path) -> list[tuple[str, Path]]:
    """(path under `folder`, file) of each of its files; a link is never followed out of it."""
    return [
        (file.relative_to(folder).as_posix(), file)
        for file in sorted(folder.rglob("*"))
        if file.is_file() and not file.is_symlink()
    ]


# what an entry that is neither a folder nor a plain file is, in French (``stat.S_IFMT``)
_KINDS = {
    stat.S_IFIFO: "tube nommé, fifo",
    stat.S_IFSOCK: "socket",
    stat.S_IFCHR: "périphérique",
    stat.S_IFBLK: "périphérique",
}


def not_regular(folder: Path, guarded: Iterable[Path] = ()) -> list[tuple[str, str]]:
    """(path under `folder`, what it is in French) of each entry of `folder` (itself as ``.``)
    that is no folder or plain file: a link (never followed: nbgrader would copy its target, the
    gradebook or ``/etc/shadow``, as the student's), a fifo, a device, a `guarded` file (the
    gradebook) under another name. Other hard links are plain files: a teacher's snapshot
    (``cp -al``) makes them, and a student cannot link a file they do not own
    (protected_hardlinks; collect and zip-collect copy)."""
    found: list[tuple[str, str]] = []
    guarded_ids = set()
    for path in guarded:
        with suppress(OSError):
            info = path.stat()
            guarded_ids.add((info.st_dev, info.st_ino))

    def walk_into(path: Path, rel: str) -> bool:  # a folder to walk, else named if strange
        try:
            info = path.lstat()
        except OSError:
            found.append((rel, "illisible"))
            return False
        mode = stat.S_IFMT(info.st_mode)
        if mode == stat.S_IFDIR:
            return True
        if mode == stat.S_IFREG and (info.st_dev, info.st_ino) in guarded_ids:
            found.append((rel, "le carnet de notes lui-même, sous un autre nom (lien physique)"))
        elif mode == stat.S_IFLNK:
            what = f"lien symbolique vers «\u00a0{os.readlink(path)}\u00a0», non suivi"
            found.append((rel, what))
        elif mode != stat.S_IFREG:
            found.append((rel, _KINDS.get(mode, "fichier spécial")))
        return False

    if not os.path.lexists(folder) or not walk_into(folder, "."):
        return found
    for top, dirs, files in os.walk(folder):  # never into a link (followlinks=False)
        base = Path(top)
        prefix = base.relative_to(folder).as_posix()
        for name in sorted(dirs + files):
            rel = name if prefix == "." else f"{prefix}/{name}"
            if not walk_into(base / name, rel) and name in dirs:
                dirs.remove(name)
        dirs.sort()
    return sorted(found)


def load_config(grader_dir: str | os.PathLike[str]) -> Config:
    """The configuration nbgrader started in `grader_dir` reads (Jupyter's, then its own)."""
    from traitlets.config import Config
    from traitlets.config.loader import PyFileConfigLoader

    grader = Path(grader_dir).resolve()
    config = Config()
    files = _jupyter_configs() + [grader / CONFIG]
    for path in dict.fromkeys(p.resolve() for p in files if p.is_file()):
        config.merge(PyFileConfigLoader(path.name, path=str(path.parent)).load_config())
    return config


def course_dirs(grader_dir: str | os.PathLike[str] | None = None) -> CourseDirs:
    """The course's folders as nbgrader, started in `grader_dir`, would configure them."""
    from nbgrader.coursedir import CourseDirectory

    grader = find_grader_dir() if grader_dir is None else Path(grader_dir).resolve()
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
    )
