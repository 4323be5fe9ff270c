"""Look inside the tutor's SQLite file without changing it.

`python -m course.inspecter [PATH]` prints the `user_states` rows and the number of events per
session (the two SELECTs of lesson 3); `tables(path)` gives the four tables as pandas
DataFrames for the lessons. The file is opened read-only by ``course.dbfile``, so inspecting
never writes to it nor leaves a file beside it.
"""

from __future__ import annotations

import json
import os
import sqlite3
import sys
from typing import TYPE_CHECKING

from . import app, dbfile
from .dbfile import TABLES

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["TABLES", "InspectionError", "connect_readonly", "inspecter", "tables", "main"]

_JSON_COLUMNS = {
    "app_states": "state",
    "user_states": "state",
    "sessions": "state",
    "events": "event_data",
}


class InspectionError(ValueError):
    """Le fichier ne peut pas être inspecté : absent, pas du SQLite, ou sans les quatre
    tables d'une base de sessions."""


def connect_readonly(path: str | os.PathLike[str]) -> sqlite3.Connection:
    """A read-only connection to an existing tutor database (``dbfile.connect_readonly``:
    nothing beside the file is created or changed), with a French error otherwise."""
    try:
        return dbfile.connect_readonly(path)
    except dbfile.DbFileError as exc:
        raise InspectionError(str(exc)) from None


def inspecter(path: str | os.PathLike[str] = app.DEFAULT_DB) -> str:
    """Les deux lignes à lire : les lignes de ``user_states``, puis le nombre d'événements
    de chaque session (paires ``(nombre, session_id)``, par id de session)."""
    con = connect_readonly(path)
    try:
        states = con.execute("SELECT app_name, user_id, state FROM user_states").fetchall()
        counts = con.execute(
            "SELECT COUNT(*), session_id FROM events GROUP BY session_id ORDER BY session_id"
        ).fetchall()
    finally:
        con.close()
    return f"{states}\n{counts}"


def tables(path: str | os.PathLike[str] = app.DEFAULT_DB) -> dict[str, pd.DataFrame]:
    """Les quatre tables en DataFrames ; chaque colonne JSON est gardée et dépliée en colonnes.

    Les colonnes dépliées portent le chemin JSON, par exemple
    ``state.progression.python.niveau`` ou ``event_data.content.parts``.
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
    from .french_args import quiet_when_the_reader_leaves  # the command's, not the lessons'

    # `python -m course.inspecter tuteur.db | head -1`: the rest dropped, no BrokenPipeError
    quiet_when_the_reader_leaves()
    args = sys.argv[1:] if argv is None else argv
    if len(args) > 1 or (args and args[0] in {"-h", "--help"}):
        print("Usage : python -m course.inspecter [CHEMIN_DE_LA_BASE]", file=sys.stderr)
        return 0 if args and args[0] in {"-h", "--help"} else 2
    path = args[0] if args else app.default_db_path()
    try:
        print(inspecter(path))
    except InspectionError as exc:
        print(f"Erreur : {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
