"""The class list as teachers have it (an Excel or LibreOffice export), registered in the gradebook.

nbgrader's ``db student import`` wants UTF-8, commas and its own English column names: a French
spreadsheet (BOM, ``;``, Windows-1252, "Prénom") gives "Unknown keys in csv" or a
``UnicodeDecodeError``. This reads what a teacher's spreadsheet writes, checks every line first
(so nothing is half-imported), then hands a clean copy to stock ``nbgrader db student import``::

    python -m grading.roster_csv eleves.csv      (make students ELEVES=grader/eleves.csv)

Accepted: UTF-8 with or without BOM, UTF-16 with BOM, Windows-1252; ``,``, ``;`` or tab; columns
``id``/``identifiant``, ``prénom``/``first_name``, ``nom``/``last_name``,
``courriel``/``e-mail``/``email`` (any case, accents optional); ids NFC-normalised.
"""

from __future__ import annotations

import codecs
import csv
import io
import re
import subprocess
import sys
import tempfile
import unicodedata
from dataclasses import dataclass
from pathlib import Path

from .french_args import FrenchParser
from .ids import normalize_id, quoted
from .system_reason import french_message, french_reason

__all__ = ["ImportFailed", "RosterError", "Student", "main", "read_roster", "register"]

# spreadsheet header (folded: NFC, lower case, no accents, no spaces/dashes/underscores) -> field
COLUMNS = {
    "id": "id",
    "identifiant": "id",
    "studentid": "id",
    "prenom": "first_name",
    "firstname": "first_name",
    "nom": "last_name",
    "nomdefamille": "last_name",
    "lastname": "last_name",
    "courriel": "email",
    "email": "email",
    "mail": "email",
    "adresseelectronique": "email",
    "lmsuserid": "lms_user_id",
}
FIELDS = ("id", "first_name", "last_name", "email", "lms_user_id")
# An id becomes a folder name (submitted/<id>/), an exchange name (<id>+<assignment>+<time>)
# and an nbgrader --student glob, and formgrader writes it raw into its pages' scripts: none of
# these characters may be in it.
BAD_ID = re.compile(r"[/\\+*?\[\]\x00-\x1f\x7f\"<>&`]|^\.{1,2}$|\s")
EMAIL = re.compile(r"^[^@\s]+@[^@\s]+$")


class ImportFailed(Exception):
    """nbgrader refused the checked roster (its log says why)."""


class RosterError(Exception):
    """A roster refused, with one French sentence per problem (each naming its line)."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


@dataclass(frozen=True)
class Student:
    id: str
    first_name: str = ""
    last_name: str = ""
    email: str = ""
    lms_user_id: str = ""
    line: int = 0


def _fold(header: str) -> str:
    text = unicodedata.normalize("NFKD", header.strip().lower())
    text = "".join(ch for ch in text if not unicodedata.combining(ch))
    return re.sub(r"[\s_\-’'.]", "", text)


def _decode(data: bytes, name: str) -> str:
    """The text of a roster file: UTF-8 (BOM or not), UTF-16 with BOM, else Windows-1252."""
    if data.startswith(codecs.BOM_UTF8):
        return data[3:].decode("utf-8", errors="strict")
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return data.decode("utf-16")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    try:
        return data.decode("cp1252")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise RosterError(
            [
                f"Ligne {line} de {name}\u00a0: octet {data[exc.start]:#04x} illisible (ni UTF-8 "
                "ni Windows-1252)\u00a0; enregistrez la liste en «\u00a0CSV UTF-8\u00a0»."
            ]
        ) from None


def _separator(header_line: str) -> str:
    counts = {sep: header_line.count(sep) for sep in (";", ",", "\t")}
    best = max(counts, key=lambda sep: counts[sep])
    return best if counts[best] else ","


def read_roster(path: str | Path) -> list[Student]:
    """Every student of the roster at `path`, checked; RosterError lists each bad line."""
    path = Path(path)
    name = path.name
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise RosterError(
            [f"Liste d'élèves illisible\u00a0: {path} ({french_reason(exc)})."]
        ) from None
    text = _decode(data, name)
    lines = text.splitlines()
    if not lines or not lines[0].strip():
        raise RosterError([f"Ligne 1 de {name}\u00a0: l'en-tête manque (au moins une colonne id)."])
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=_separator(lines[0]))
    header = next(reader)
    problems: list[str] = []
    fields: list[str] = []
    for raw in header:
        field = COLUMNS.get(_fold(raw))
        if field is None:
            problems.append(
                f"Ligne 1 de {name}\u00a0: colonne inconnue «\u00a0{raw.strip()}\u00a0» (colonnes "
                "reconnues\u00a0: id ou identifiant, prénom, nom, courriel)."
            )
        elif field in fields:
            problems.append(
                f"Ligne 1 de {name}\u00a0: colonne «\u00a0{raw.strip()}\u00a0» en double."
            )
        fields.append(field or "")
    if "id" not in fields and not problems:
        problems.append(f"Ligne 1 de {name}\u00a0: pas de colonne id (ou identifiant).")
    if problems:
        raise RosterError(problems)
    students: list[Student] = []
    seen: dict[str, int] = {}
    for row in reader:
        line = reader.line_num
        if not any(cell.strip() for cell in row):
            continue  # blank line, or Excel's trailing ";;;"
        if len(row) > len(fields) and any(cell.strip() for cell in row[len(fields) :]):
            problems.append(
                f"Ligne {line} de {name}\u00a0: {len(row)} valeurs pour {len(fields)} colonnes."
            )
            continue
        values = {
            f: unicodedata.normalize("NFC", cell.strip())
            for f, cell in zip(fields, row, strict=False)
        }
        sid = values.get("id", "")
        if not sid:
            problems.append(f"Ligne {line} de {name}\u00a0: identifiant vide.")
            continue
        if BAD_ID.search(sid):
            problems.append(
                f"Ligne {line} de {name}\u00a0: identifiant «\u00a0{sid}\u00a0» refusé (ni "
                'espace, ni barre, +, *, ?, [ ou ], ni ", <, >, & ou `, ni «\u00a0.\u00a0» ou '
                "«\u00a0..\u00a0»\u00a0: il devient un nom de dossier et s'affiche dans "
                "formgrader)."
            )
            continue
        if sid in seen:
            problems.append(
                f"Ligne {line} de {name}\u00a0: identifiant «\u00a0{sid}\u00a0» déjà donné "
                f"ligne {seen[sid]}."
            )
            continue
        email = values.get("email", "")
        if email and not EMAIL.match(email):
            problems.append(
                f"Ligne {line} de {name}\u00a0: courriel «\u00a0{email}\u00a0» invalide."
            )
            continue
        seen[sid] = line
        students.append(Student(**{f: values.get(f, "") for f in FIELDS}, line=line))
    if problems:
        raise RosterError(problems)
    if not students:
        raise RosterError([f"{name}\u00a0: aucun élève après l'en-tête."])
    return students


def _clean_csv(students: list[Student], dest: Path) -> None:
    with open(dest, "w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(FIELDS)
        for s in students:
            writer.writerow([getattr(s, f) for f in FIELDS])


def register(
    path: str | Path, grader_dir: Path | None = None, reenrol: set[str] | None = None
) -> tuple[list[str], list[str]]:
    """Register the roster's students in the course's gradebook (stock ``nbgrader db student
    import`` on a checked, normalised copy), except the learners the erasure register holds and
    `reenrol` does not name; returns the French summary lines and the erased learners skipped."""
    from .erasure_register import class_registers, erased_on
    from .erasure_register import reenrol as remove_from_register
    from .nbgrader_run import BIN, nbgrader_env, tools_on_path
    from .paths import course_dirs

    students = read_roster(path)
    tools_on_path()
    dirs = course_dirs(grader_dir)
    registers = class_registers(dirs.db_url, dirs.grader_dir)
    confirmed = {normalize_id(x) for x in reenrol or set()}
    skipped: list[str] = []
    lines_erased: list[str] = []
    for student in list(students):
        when = erased_on(student.id, registers)
        if when is None:
            continue
        if student.id in confirmed:
            remove_from_register(student.id, registers)
            lines_erased.append(
                f"Réinscrit(e) à votre demande (effacé(e) le {_day(when)}) : {quoted(student.id)}."
            )
            continue
        students.remove(student)
        skipped.append(student.id)
    if skipped:
        lines_erased.append(
            f"✘ {len(skipped)} élève(s) effacé(s) à sa demande (RGPD), non inscrit(s) : "
            + ", ".join(quoted(s) for s in skipped)
            + ". Retirez-le(s) de votre liste ; pour une réinscription voulue : "
            f"make students REINSCRIRE={skipped[0]}."
        )
    before = _registered(dirs.db_url)
    log_dir = dirs.grader_dir / "rapport"
    log_dir.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="eleves-") as tmp:
        clean = Path(tmp) / "eleves.csv"
        _clean_csv(students, clean)
        proc = subprocess.run(
            [str(BIN / "nbgrader"), "db", "student", "import", str(clean)],
            cwd=dirs.grader_dir,
            env=nbgrader_env(),
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
        )
    log = log_dir / "eleves.log"
    log.write_text(proc.stdout + proc.stderr, encoding="utf-8")
    if proc.returncode != 0:
        raise ImportFailed(
            f"nbgrader n'a pas pu inscrire la classe (code {proc.returncode})\u00a0: voir {log}."
        )
    new = [s.id for s in students if s.id not in before]
    kept = sorted(before - {s.id for s in students})
    lines = [
        f"{len(students)} élève(s) inscrit(s) depuis {Path(path).name}\u00a0: {len(new)} "
        f"nouveau(x), {len(students) - len(new)} mis à jour."
    ]
    if kept:
        lines.append(
            f"Au carnet de notes mais pas dans la liste (gardés)\u00a0: {', '.join(kept)}."
        )
    lines += lines_erased
    lines.append(f"Journal de nbgrader\u00a0: {log}")
    return lines, skipped


def _day(iso: str) -> str:
    """``2026-12-04`` as a French reader writes it: ``04/12/2026``."""
    parts = iso.split("-")
    return "/".join(reversed(parts)) if len(parts) == 3 else iso


def _registered(db_url: str) -> set[str]:
    from nbgrader.api import Gradebook

    with Gradebook(db_url) as gb:
        return {s.id for s in gb.students}


def main(argv: list[str] | None = None) -> int:
    parser = FrenchParser(
        prog="python -m grading.roster_csv",
        description="Inscrire la classe au carnet de notes depuis une liste CSV (Excel, "
        "LibreOffice\u00a0: UTF-8 ou Windows-1252, «\u00a0,\u00a0» ou «\u00a0;\u00a0», "
        "colonnes en français ou en anglais).",
    )
    parser.add_argument("roster", type=Path, metavar="LISTE", help="la liste des élèves (CSV)")
    parser.add_argument(
        "--reinscrire",
        action="append",
        default=[],
        metavar="IDENTIFIANT",
        help="réinscrire un élève effacé (il sort du registre des effacements)",
    )
    parser.add_grader_dir()
    args = parser.parse_args(argv)
    try:
        lines, skipped = register(args.roster, args.grader_dir, set(args.reinscrire))
    except RosterError as exc:
        for problem in exc.problems:
            print(f"✘ {problem}", file=sys.stderr)
        print("Rien n'a été inscrit.", file=sys.stderr)
        return 2
    except (FileNotFoundError, ImportFailed) as exc:
        print(f"✘ {french_message(exc)}", file=sys.stderr)
        return 2
    print("\n".join(lines))
    return 1 if skipped else 0


if __name__ == "__main__":
    raise SystemExit(main())
