"""What a teacher added by hand to a generated CSV (``rapport/notes.csv``, ``grades.csv``), kept
when an erasure generates it again: hand-added columns row by row (matched on the id, in NFC),
rows without an id (a total) at the end, the erased learner's row gone. What cannot come back is
named: a row of a student no longer in the gradebook, a generated value edited by hand."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from pathlib import Path

from .ids import normalize_id, quoted

__all__ = ["ID_COLUMNS", "read_table", "restore_hand_edits"]

ID_COLUMNS = ("student_id", "identifiant", "élève")
SHOWN = 5  # names listed in a message before « … »


@dataclass
class Table:
    header: list[str]
    rows: list[list[str]]
    delimiter: str
    encoding: str  # "utf-8-sig" (with a BOM), "utf-8" or "cp1252"
    line_end: str


def read_table(path: Path) -> Table | None:
    """The CSV as a spreadsheet may have saved it (UTF-8, BOM or not, else Windows-1252; `,` or
    `;`); None when missing or empty; ValueError (in French) when it is no table."""
    if not path.is_file():
        return None
    data = path.read_bytes()
    if not data.strip():
        return None
    if data.startswith(b"\xef\xbb\xbf"):
        encoding, text = "utf-8-sig", data.decode("utf-8-sig")
    else:
        try:
            encoding, text = "utf-8", data.decode("utf-8")
        except UnicodeDecodeError:
            encoding, text = "cp1252", data.decode("cp1252", errors="replace")
    first = text.split("\n", 1)[0]
    delimiter = ";" if first.count(";") > first.count(",") else ","
    line_end = "\r\n" if "\r\n" in text else "\n"
    try:
        rows = list(csv.reader(io.StringIO(text, newline=""), delimiter=delimiter))
    except csv.Error as exc:  # a NUL byte, a field too large: not a table
        raise ValueError(f"{path}\u00a0: pas un tableau CSV lisible ({exc})") from None
    if not rows:
        return None
    return Table(rows[0], rows[1:], delimiter, encoding, line_end)


def _id_column(header: list[str]) -> int | None:
    return next((header.index(c) for c in ID_COLUMNS if c in header), None)


def _key(cell: str) -> str:
    """The id of a row: NFC, without the quote that neutralises a formula-like id."""
    return normalize_id(cell.strip().lstrip("'"))


def _listed(names: list[str]) -> str:
    return ", ".join(quoted(n) for n in names[:SHOWN]) + (", …" if len(names) > SHOWN else "")


def restore_hand_edits(
    path: Path, before: Table | None, erased: str, shown: Path | None = None
) -> list[str]:
    """Put back into the regenerated `path` what the teacher added to `before`, except the
    erased learner's row; the French notes for the teacher, naming it `shown` (the file it is
    the next version of), by default `path`."""
    told = shown or path
    after = read_table(path)
    if before is None or after is None:
        return []
    old_id, new_id = _id_column(before.header), _id_column(after.header)
    extra = [k for k, name in enumerate(before.header) if name not in after.header]
    added = _listed([before.header[k] for k in extra])
    if old_id is None or new_id is None:
        return [f"{told}\u00a0: colonne(s) ajoutée(s) à la main perdue(s) {added}"] if extra else []
    old_rows = {}
    loose = []  # rows without an id: a total, a remark
    for row in before.rows:
        cell = row[old_id] if old_id < len(row) else ""
        if not cell.strip():
            if any(c.strip() for c in row):
                loose.append(row)
        elif _key(cell) != erased:
            old_rows[_key(cell)] = row
    new_keys = {_key(r[new_id]) for r in after.rows if new_id < len(r)}
    gone = sorted(k for k in old_rows if k not in new_keys)
    edited: dict[str, list[str]] = {}
    shared = [(before.header.index(n), k) for k, n in enumerate(after.header) if n in before.header]
    rows = []
    for row in after.rows:
        old = old_rows.get(_key(row[new_id])) if new_id < len(row) else None
        for k_old, k_new in shared if old is not None else ():
            was = old[k_old] if k_old < len(old) else ""
            if k_new < len(row) and was != row[k_new]:
                edited.setdefault(after.header[k_new], []).append(_key(row[new_id]))
        rows.append(row + [(old[k] if old is not None and k < len(old) else "") for k in extra])
    notes = []
    if extra or loose:
        header = after.header + [before.header[k] for k in extra]
        # each loose row laid out on the new header (cells of columns that are gone dropped)
        cells = (dict(zip(before.header, row, strict=False)) for row in loose)
        rows += [[c.get(name, "") for name in header] for c in cells]
        _write(path, after, header, rows)
        if extra:
            notes.append(f"{told}\u00a0: colonne(s) ajoutée(s) à la main gardée(s) {added}")
        if loose:
            notes.append(f"{told}\u00a0: {len(loose)} ligne(s) sans identifiant gardée(s) à la fin")
    if gone:
        notes.append(
            f"{told}\u00a0: ligne(s) d'élèves absents du carnet de notes non reprise(s)\u00a0: "
            f"{_listed(gone)}"
        )
    for column, ids in edited.items():
        notes.append(
            f"{told}\u00a0: colonne {quoted(column)}, valeur(s) différente(s) du carnet de notes "
            f"(modifiée(s) à la main\u00a0?) remplacée(s) pour {_listed(ids)}"
        )
    return notes


def _write(path: Path, like: Table, header: list[str], rows: list[list[str]]) -> None:
    """`path` rewritten in the format the generator used (encoding, separator, line ends)."""
    buf = io.StringIO(newline="")
    writer = csv.writer(buf, delimiter=like.delimiter, lineterminator=like.line_end)
    writer.writerows([header, *rows])
    tmp = path.with_name(f".{path.name}.colonnes")
    tmp.write_bytes(buf.getvalue().encode(like.encoding, errors="replace"))
    tmp.replace(path)
