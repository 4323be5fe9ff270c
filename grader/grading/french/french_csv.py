"""CSV files a French spreadsheet opens right, beside the ones scripts read.

French Excel wants ``;``, decimal commas and a byte-order mark (else a row in one cell, ``1.5``
a date, ``ChloÃ©``). Beside ``grades.csv`` and ``notes.csv``, kept for scripts and nbgrader,
``rapport/export-tableur.csv`` (``make export``) and ``rapport/notes-tableur.csv`` (``make
rapport``) hold the same rows in French: headers, values, dates in the course's time zone,
French order, text neutralised as in ``notes.csv``.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Iterable
from pathlib import Path

from .csv_safe import LINE_END, PERSON_KEYS, SCORE_KEYS, neutralise
from .french_format import COURSE_TIME_ZONE, collation_key, french_datetime, points_text

__all__ = [
    "EXPORT_HEADER",
    "EXPORT_NAME",
    "REPORT_NAME",
    "french_csv_bytes",
    "write_export",
    "write_french_csv",
]

EXPORT_NAME = "export-tableur.csv"
REPORT_NAME = "notes-tableur.csv"
ZONE = f"fuseau {COURSE_TIME_ZONE}"
EXPORT_HEADER = [
    "devoir",
    f"date limite ({ZONE})",
    f"heure de rendu ({ZONE})",
    "identifiant",
    "nom",
    "prénom",
    "courriel",
    "note brute",
    "pénalité de retard",
    "note",
    "note maximale",
]


def _cell(value: object) -> str:
    """A cell as French Excel reads it: numbers with a decimal comma, text neutralised."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, bool):
        return "oui" if value else "non"
    if isinstance(value, int | float):
        return points_text(value)
    return str(neutralise(str(value)))


def french_csv_bytes(header: list[str], rows: Iterable[list[object]]) -> bytes:
    """`rows` under `header` as French Excel reads them: ``;``, UTF-8 BOM, CRLF, decimal comma."""
    out = io.StringIO(newline="")
    writer = csv.writer(out, delimiter=";", lineterminator=LINE_END)
    writer.writerow(header)
    for row in rows:
        writer.writerow([_cell(v) for v in row])
    return out.getvalue().encode("utf-8-sig")


def write_french_csv(path: Path, header: list[str], rows: Iterable[list[object]]) -> Path:
    """Write `rows` under `header` (``french_csv_bytes``)."""
    Path(path).write_bytes(french_csv_bytes(header, rows))
    return path


def _number(text: str) -> float | str:
    try:
        return float(text)
    except ValueError:
        return text


def write_export(rows: list[dict[str, str]], dest: Path) -> list[list[object]]:
    """``export-tableur.csv``, the French twin of ``nbgrader export``'s ``grades.csv``: its rows
    (``SafeCsvExport.rows``) in French order (assignment, then student) and values; returns them."""
    french = [
        [r["assignment"], french_datetime(r["duedate"]), french_datetime(r["timestamp"])]
        + [r[k] for k in PERSON_KEYS]
        + [_number(r[k]) for k in SCORE_KEYS]
        for r in sorted(
            rows, key=lambda r: (collation_key(r["assignment"]), collation_key(r["student_id"]))
        )
    ]
    write_french_csv(dest, EXPORT_HEADER, french)
    return french
