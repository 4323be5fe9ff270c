"""The class's gradebook, read without ever being written (but for SQLite's own rollback of a
write stopped midway, which any nbgrader command would do): a SQLite file opened read-only, a
server through SQLAlchemy (nbgrader's ``Gradebook`` would create its tables, or an empty file,
in place of a lost one), and why it cannot be used, in French, without a server's password."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from contextlib import closing, suppress
from pathlib import Path
from typing import Protocol
from urllib.parse import parse_qsl, quote, unquote

from ..french.system_reason import GradingError

__all__ = [
    "COUNTS",
    "ENROL",
    "RESTORE",
    "STUDENTS",
    "GradebookError",
    "gradebook_counts",
    "gradebook_problem",
    "gradebook_rows",
    "read_only",
    "server_name",
    "sqlite_copy",
    "sqlite_path",
    "sqlite_url",
]


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


class _Class(Protocol):  # paths.CourseDirs, as far as the gradebook goes
    db_url: str


class GradebookError(GradingError):
    """The class's gradebook cannot be read, in one French sentence (`reason`: why, alone)."""

    def __init__(self, message: str, reason: str = "") -> None:
        super().__init__(message)
        self.reason = reason or message


_MALFORMED = "database disk image is malformed"  # SQLite's words for a damaged file
STUDENTS = "SELECT id FROM student"
COUNTS = "SELECT (SELECT count(*) FROM student), (SELECT count(*) FROM grade)"


def sqlite_rows(
    path: Path, sql: str, refusal: Callable[[str], Exception], params: list | tuple = ()
) -> list:
    """`sql`'s rows in the SQLite file `path`, read-only; an sqlite3 error raises `refusal(why)`."""
    try:
        with closing(read_only(path)) as con:
            return con.execute(sql, params).fetchall()
    except sqlite3.Error as exc:
        raise refusal(str(exc)) from None


def _sqlite_rows(path: Path, sql: str) -> list:
    if not os.path.lexists(path):
        raise GradebookError(f"le carnet de notes est introuvable ({path})")
    if not path.is_file():  # a folder, a pipe, a link to /dev/zero: there, yet no gradebook
        kind = "un dossier" if path.is_dir() else "ni un fichier ni un dossier"
        raise GradebookError(f"le carnet de notes n'est pas un fichier ({path}\u00a0: {kind})")
    if path.stat().st_size == 0:
        raise GradebookError(f"le carnet de notes est vide (0 octet : {path})")

    def refusal(why: str) -> GradebookError:
        reason = "pas une base nbgrader" if "no such table" in why else why
        if _MALFORMED in why:
            reason = f"fichier abîmé, SQLite\u00a0: {why}"
        return GradebookError(f"le carnet de notes est illisible ({path} : {reason})", reason)

    _roll_back_a_stopped_write(path)
    # a damaged page inside the file: a count can read past it, a backup would keep it as the
    # good one and the purge delete the sound ones; SQLite's own check sees it (milliseconds)
    checked = sqlite_rows(path, "PRAGMA quick_check(1)", refusal)
    if checked != [("ok",)]:  # « *** in database main *** », then where: the last line
        where = str(checked[0][0]).strip().splitlines()[-1][:200] if checked else ""
        raise refusal(f"{_MALFORMED} ({where})" if where else _MALFORMED)
    return sqlite_rows(path, sql, refusal)


def _roll_back_a_stopped_write(path: Path) -> None:
    """A write stopped midway (``kill -9``, a power cut) leaves a hot journal beside the file:
    opened read-only, SQLite cannot roll it back and calls the gradebook « readonly » (a restore
    would then lose every grade since the last backup). Any nbgrader command opening it rolls
    it back, as this does: the gradebook as of its last finished write. A journal a running
    writer holds is not hot: then this only reads, waiting for the writer."""
    journal = Path(f"{path}-journal")
    with suppress(OSError):
        if journal.is_file() and journal.stat().st_size > 0:
            with suppress(sqlite3.Error), closing(sqlite3.connect(path, timeout=60)) as con:
                con.execute("PRAGMA schema_version").fetchone()


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
        from sqlalchemy import make_url  # only for a gradebook on a server

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
    """The rows `sql` reads in the gradebook at `db_url`, never written (see above); None when
    there is none yet (no file, no nbgrader tables); GradebookError, in French and without the
    URL's password, otherwise."""
    db = sqlite_path(db_url)
    if db is None:
        return _server_rows(db_url, sql)
    return _sqlite_rows(db, sql) if os.path.lexists(db) else None


def gradebook_counts(path: Path) -> dict[str, int]:
    """What gradebook `path` holds that a backup must not lose: its students and its grades;
    GradebookError if missing, empty or unreadable (every class command checks it first)."""
    students, grades = _sqlite_rows(path, COUNTS)[0]
    return {"students": students, "grades": grades}


def gradebook_problem(dirs: _Class, missing_ok: bool = False, empty_ok: bool = True) -> str | None:
    """Why the class's gradebook cannot be used and what to do, in French, or None: missing
    (unless `missing_ok`), empty, damaged (a truncated file), unreadable (a server down),
    registering nobody (unless `empty_ok`). ``make sauvegarde``'s check, made before nbgrader or
    SQLAlchemy read it: they would stop on a traceback, or create an empty gradebook instead."""
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
