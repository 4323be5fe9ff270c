"""``make students``: the class list as teachers have it (Excel, LibreOffice) registered in the
gradebook. ``nbgrader db student import`` wants UTF-8, commas and English columns ("Unknown keys
in csv" otherwise): the class's one reader (``grader/hub/roster.py``) checks every line first,
so nothing is half-imported, then a clean copy of its students goes to stock nbgrader."""

from __future__ import annotations

import csv
import sys
import tempfile
from pathlib import Path

from nbgrader.api import Gradebook

from .classroom.class_lock import class_lock
from .classroom.gradebook import gradebook_problem
from .classroom.ids import Member, RosterError, decode_roster, normalize_id, parse_roster, quoted
from .classroom.paths import course_dirs
from .classroom.private import make_private
from .classroom.schema_stamp import stamp_in_process
from .french.french_args import FrenchParser
from .french.french_format import french_day
from .french.system_reason import GradingError, french_message, french_reason
from .privacy.erasure_register import class_registers, erased_on
from .privacy.erasure_register import reenrol as record_reenrolment
from .runs.nbgrader_run import run_quiet

__all__ = ["main", "read_students", "register"]

FIELDS = ("id", "first_name", "last_name", "email", "lms_user_id")


def read_students(path: Path) -> list[Member]:
    """The students of the class list at `path` (its staff left out); RosterError otherwise."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise RosterError(
            f"Liste d'élèves illisible\u00a0: {path} ({french_reason(exc)})."
        ) from None
    members = parse_roster(decode_roster(data, path.name), path.name)
    students = [m for m in members if m.role == "student"]
    if not students:
        raise RosterError(f"{path.name}\u00a0: aucun élève après l'en-tête.")
    return students


def register(
    path: str | Path, grader_dir: Path | None = None, reenrol: set[str] | None = None
) -> tuple[list[str], list[str]]:
    """Register the roster's students (stock ``nbgrader db student import`` on a checked copy),
    except erased learners `reenrol` does not name; (French summary lines, skipped learners)."""
    students = read_students(Path(path))
    stamp_in_process()
    dirs = course_dirs(grader_dir)
    if why := gradebook_problem(dirs, missing_ok=True):  # nbgrader makes a missing one
        raise GradingError(f"Rien n'a été inscrit\u00a0: {why}.")
    registers = class_registers(dirs.db_url, dirs.grader_dir)
    confirmed = {normalize_id(x) for x in reenrol or set()}
    skipped: list[str] = []
    lines_erased: list[str] = []
    for student in list(students):
        when = erased_on(student.id, registers)
        if when is not None and student.id in confirmed:
            record_reenrolment(student.id, registers)
            lines_erased.append(
                f"Réinscrit(e) à votre demande (effacé(e) le {french_day(when)})"
                f" : {quoted(student.id)}."
            )
        elif when is not None:
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
    with tempfile.TemporaryDirectory(prefix="eleves-") as tmp:
        clean = Path(tmp) / "eleves.csv"
        with open(clean, "w", encoding="utf-8", newline="") as fh:
            csv.writer(fh).writerows([FIELDS, *([getattr(s, f) for f in FIELDS] for s in students)])
        run = run_quiet(
            dirs.grader_dir, ["db", "student", "import", str(clean)], dirs.log_file("eleves")
        )
    log = run.log_path
    if run.status != 0:
        raise GradingError(
            f"nbgrader n'a pas pu inscrire la classe (code {run.status})\u00a0: voir {log}."
        )
    new = [s.id for s in students if s.id not in before]
    kept = sorted(set(before) - {s.id for s in students})
    after = _registered(dirs.db_url)
    same = [s.id for s in students if s.id in before and after.get(s.id) == before[s.id]]
    lines = [
        f"{len(students)} élève(s) inscrit(s) depuis {Path(path).name}\u00a0: {len(new)} "
        f"nouveau(x), {len(students) - len(new) - len(same)} mis à jour, {len(same)} inchangé(s)."
    ]
    if kept:
        lines.append(
            f"Au carnet de notes mais pas dans la liste (gardés)\u00a0: {', '.join(kept)}."
        )
    return [*lines, *lines_erased, f"Journal de nbgrader\u00a0: {log}"], skipped


def _registered(db_url: str) -> dict[str, tuple]:
    """Each registered student's id -> what the list sets (names, e-mail, LMS id)."""
    with Gradebook(db_url) as gb:
        return {s.id: tuple(getattr(s, f) or None for f in FIELDS[1:]) for s in gb.students}


def main(argv: list[str] | None = None) -> int:
    parser = FrenchParser(
        prog="python -m grading.roster_csv",
        description="Inscrire la classe au carnet de notes depuis une liste CSV (Excel, "
        "LibreOffice\u00a0: UTF-8 ou Windows-1252, «\u00a0,\u00a0» ou «\u00a0;\u00a0», "
        "colonnes en français ou en anglais).",
    )
    parser.add_argument("roster", type=Path, metavar="LISTE", help="la liste des élèves (CSV)")
    why = "réinscrire un élève effacé (le registre des effacements garde son effacement et note "
    why += "sa réinscription)"
    parser.add_argument(
        "--reinscrire", action="append", default=[], metavar="IDENTIFIANT", help=why
    )
    parser.add_grader_dir()
    args = parser.parse_args(argv)
    try:
        with class_lock(args.grader_dir, "make students"):
            lines, skipped = register(args.roster, args.grader_dir, set(args.reinscrire))
            rights, private = make_private(args.roster, "noms, courriels")
    except RosterError as exc:
        for problem in exc.problems:
            print(f"✘ {problem}", file=sys.stderr)
        print("Rien n'a été inscrit.", file=sys.stderr)
        return 2
    except (FileNotFoundError, GradingError) as exc:
        print(f"✘ {french_message(exc)}", file=sys.stderr)
        return 2
    print("\n".join(lines + ([rights] if rights else [])))
    return 1 if skipped or not private else 0


if __name__ == "__main__":
    raise SystemExit(main())
