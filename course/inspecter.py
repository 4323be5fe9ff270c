"""Look inside the tutor's SQLite file without changing it (the seed's `inspecter.py`).

`python -m course.inspecter [PATH]` prints the `user_states` rows and the number of events per
session; `tables(path)` gives the four tables as pandas DataFrames for the lessons. The file
is opened read-only (`mode=ro`), so inspecting never writes to it.
"""

from __future__ import annotations

import json
import os
import sqlite3
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["TABLES", "InspectionError", "connect_readonly", "inspecter", "tables", "main"]

TABLES = ("app_states", "user_states", "sessions", "events")
_JSON_COLUMNS = {
    "app_states": "state",
    "user_states": "state",
    "sessions": "state",
    "events": "event_data",
}
_SQLITE_HEADER = b"SQLite format 3\x00"


class InspectionError(ValueError):
    """The file cannot be inspected: missing, not SQLite, or not a tutor's database."""


def connect_readonly(path: str | os.PathLike[str]) -> sqlite3.Connection:
    """A read-only connection to an existing tutor database, with a French error otherwise."""
    p = Path(path)
    if not p.is_file():
        raise InspectionError(f"Fichier introuvable : {p}")
    with p.open("rb") as f:
        header = f.read(len(_SQLITE_HEADER))
    if header != _SQLITE_HEADER:
        raise InspectionError(f"{p} n'est pas une base SQLite (en-tête inattendu).")
    con = sqlite3.connect(p.resolve().as_uri() + _readonly_query(p), uri=True)
    try:
        found = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    except sqlite3.DatabaseError as exc:
        con.close()
        raise InspectionError(f"{p} est illisible comme base SQLite : {exc}") from exc
    missing = [t for t in TABLES if t not in found]
    if missing:
        con.close()
        raise InspectionError(
            f"{p} n'est pas une base du tuteur : table(s) absente(s) : {', '.join(missing)}."
        )
    return con


def _readonly_query(p: Path) -> str:
    """`mode=ro`, plus `immutable=1` when no writer left a -wal or -journal beside the file.

    A plain read-only open of a WAL database creates empty -wal and -shm files and cannot
    remove them; a closed database (no -wal, no -journal) is read as immutable instead, so
    inspecting leaves the folder exactly as it was. With a -wal present (a writer is open, or
    crashed), the read goes through it, so its pages are seen.
    """
    siblings = (p.with_name(p.name + "-wal"), p.with_name(p.name + "-journal"))
    return "?mode=ro" if any(s.exists() for s in siblings) else "?mode=ro&immutable=1"


def inspecter(path: str | os.PathLike[str] = "tuteur.db") -> str:
    """The two lines the seed's inspecter.py prints: user_states rows, (count, session) pairs."""
    con = connect_readonly(path)
    try:
        states = con.execute("SELECT app_name, user_id, state FROM user_states").fetchall()
        counts = con.execute(
            "SELECT COUNT(*), session_id FROM events GROUP BY session_id ORDER BY session_id"
        ).fetchall()
    finally:
        con.close()
    return f"{states}\n{counts}"


def tables(path: str | os.PathLike[str] = "tuteur.db") -> dict[str, pd.DataFrame]:
    """The four tables as DataFrames; JSON columns are kept and also expanded into columns.

    Expanded columns are named after the JSON path, e.g. `state.progression.python.niveau`
    or `event_data.content.parts`.
    """
    import pandas as pd

    con = connect_readonly(path)
    try:
        frames = {t: pd.read_sql_query(f"SELECT * FROM {t}", con) for t in TABLES}
    finally:
        con.close()
    for name, column in _JSON_COLUMNS.items():
        df = frames[name]
        parsed = [json.loads(v) for v in df[column]]
        expanded = pd.json_normalize(parsed).add_prefix(f"{column}.") if parsed else None
        if expanded is not None and not expanded.empty:
            frames[name] = pd.concat([df.reset_index(drop=True), expanded], axis=1)
    return frames


def main(argv: list[str] | None = None) -> int:
    """`python -m course.inspecter [PATH]` (default: $TUTEUR_DB, else tuteur.db)."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) > 1 or (args and args[0] in {"-h", "--help"}):
        print("Usage : python -m course.inspecter [CHEMIN_DE_LA_BASE]", file=sys.stderr)
        return 0 if args and args[0] in {"-h", "--help"} else 2
    path = args[0] if args else os.environ.get("TUTEUR_DB", "tuteur.db")
    try:
        print(inspecter(path))
    except InspectionError as exc:
        print(f"Erreur : {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
