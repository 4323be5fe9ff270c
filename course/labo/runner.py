"""Runs a student's ``oublier`` in its own clean process (``python -I -m course.labo.runner DIR``).

The grader starts it with a time limit and kills its whole process group afterwards; it never
imports anything from the notebook's kernel. For each planned call it opens a fresh
``SqliteSessionService`` on a copy of the fixture, awaits ``oublier(service, user_id)``, copies
the database file and its ``-wal`` as they are right after the call (before the service closes,
as in a tutor that keeps running), then records the call's outcome in ``journal.jsonl``. The
files are judged by another fresh process (``course.labo.checker``).
"""

from __future__ import annotations

import asyncio
import inspect
import json
import os
import shutil
import sqlite3
import sys
from pathlib import Path

__all__ = ["APP_NAME", "PLAN", "PRELUDE_NAMES", "main"]

# (call name, database copy, user_id): A = alice, B = again + unknown, C = bob, D = quotes.
PLAN: tuple[tuple[str, str, str], ...] = (
    ("A1", "a.db", "alice"),
    ("B1", "a.db", "alice"),
    ("B2", "a.db", "élève-inconnu"),
    ("C1", "c.db", "bob"),
    ("D1", "d.db", "o'connor"),
    ("D2", "d.db", "x' OR '1'='1"),
)
# course.tuteur.APP_NAME, written here because importing the tutor costs every run a second.
APP_NAME = "tuteur"
# Names the lab's first cell imports, available to the student's cell here too.
PRELUDE_NAMES = ("APP_NAME", "SqliteSessionService", "sqlite3", "asyncio")

# Captured before any student code runs: patching these modules later changes nothing here.
_copyfile = shutil.copyfile
_exists = os.path.exists
_dumps = json.dumps
_isawaitable = inspect.isawaitable
_connect = sqlite3.connect


def _connect_secure_delete_off(*args, **kwargs):
    """sqlite3.connect with secure_delete OFF, upstream SQLite's default.

    Debian's build turns secure_delete ON, macOS's and conda-forge's do not: forcing OFF makes
    the "nothing readable in the file" check the same on every machine. A student may still
    turn it ON on their own connection.
    """
    conn = _connect(*args, **kwargs)
    try:
        conn.execute("PRAGMA secure_delete = OFF")
    except sqlite3.Error:
        pass
    return conn


def _describe(exc: BaseException) -> dict[str, str]:
    return {"type": type(exc).__name__, "message": str(exc)[:500]}


async def _run_calls(oublier, work: Path, service_cls, write) -> None:
    snapdir = work / "instantanes"
    for name, db, user_id in PLAN:
        path = work / db
        error = None
        service = None
        try:
            service = service_cls(path)
            result = oublier(service, user_id)
            if _isawaitable(result):
                await result
            else:
                error = {"type": "PasAsync", "message": ""}
        except BaseException as exc:  # noqa: B036 - a student's sys.exit() is an outcome too
            error = _describe(exc)
        for suffix in ("", "-wal"):
            if _exists(f"{path}{suffix}"):
                try:
                    _copyfile(f"{path}{suffix}", snapdir / f"{name}.db{suffix}")
                except OSError:
                    pass
        if service is not None:
            try:
                await service.close()
            except BaseException:  # noqa: B036
                pass
        write(_dumps({"appel": name, "erreur": error}) + "\n")


def main(workdir: str) -> int:
    work = Path(workdir)
    (work / "instantanes").mkdir(exist_ok=True)
    journal = open(work / "journal.jsonl", "a", buffering=1, encoding="utf-8")  # noqa: SIM115
    write = journal.write
    sqlite3.connect = _connect_secure_delete_off
    from course.sessions import SqliteSessionService

    namespace = {
        "__name__": "soumission",
        "APP_NAME": APP_NAME,
        "SqliteSessionService": SqliteSessionService,
        "sqlite3": sqlite3,
        "asyncio": asyncio,
    }
    source = (work / "soumission.py").read_text(encoding="utf-8")
    try:
        exec(compile(source, "cellule_oublier", "exec"), namespace)  # noqa: S102
    except BaseException as exc:  # noqa: B036
        write(_dumps({"chargement": _describe(exc)}) + "\n")
        return 0
    oublier = namespace.get("oublier")
    if not callable(oublier):
        write(_dumps({"chargement": {"type": "Absente", "message": ""}}) + "\n")
        return 0
    os.chdir(work)
    asyncio.run(_run_calls(oublier, work, SqliteSessionService, write))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
