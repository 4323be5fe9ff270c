"""``make duedate``: the assignment's due date in the gradebook, said back in the course's time
zone (a date typed without a zone is UTC for nbgrader, an hour or two off a Paris deadline)."""

from __future__ import annotations

import re
from contextlib import suppress
from pathlib import Path

from nbgrader.api import Gradebook, MissingEntry

from .classroom.gradebook import gradebook_problem
from .classroom.paths import course_dirs
from .classroom.schema_stamp import stamp_in_process
from .french.french_args import FrenchParser
from .french.french_format import COURSE_TIME_ZONE, french_datetime
from .runs.nbgrader_run import finish, run_quiet, warnings_to_log

__all__ = ["main", "set_duedate"]

_ZONE = re.compile(r"(?:[A-Za-z_]+/[A-Za-z_]+|[A-Z]{1,5}|[+-]\d{2}:?\d{2})\s*$")


def set_duedate(
    assignment: str, date: str, grader_dir: Path | None = None
) -> tuple[int, list[str]]:
    """Set the due date; (exit status, French summary lines)."""
    dirs = course_dirs(grader_dir)
    if why := gradebook_problem(dirs):  # nbgrader would make an empty one: restoring then refused
        return 2, [f"✘ Date limite de «\u00a0{assignment}\u00a0» non fixée\u00a0: {why}."]
    args = ["db", "assignment", "add", assignment, f"--duedate={date}"]
    run = run_quiet(dirs.grader_dir, args, dirs.log_file("duedate"))
    if run.status:
        return 1, [run.failure(f"date limite de «\u00a0{assignment}\u00a0» non fixée")]
    stamp_in_process()
    due = None  # also for an assignment nbgrader did not add
    with warnings_to_log(run.log_path), Gradebook(dirs.db_url) as gb, suppress(MissingEntry):
        due = gb.find_assignment(assignment).duedate
    if due is None:
        return 1, [f"✘ «\u00a0{assignment}\u00a0» n'a pas de date limite dans le carnet de notes."]
    lines = [
        f"Date limite de «\u00a0{assignment}\u00a0»\u00a0: {french_datetime(due, with_zone=True)} "
        f"(carnet de notes\u00a0: {dirs.db_url})."
    ]
    if not _ZONE.search(date.strip()):
        lines.append(
            f"⚠ Heure donnée sans fuseau\u00a0: nbgrader l'a lue en UTC. Pour l'heure de Paris, "
            f'relancez avec le fuseau\u00a0: make duedate DATE="{date.strip()} {COURSE_TIME_ZONE}".'
        )
    return 0, lines


def main(argv: list[str] | None = None) -> int:
    parser = FrenchParser(
        prog="python -m grading.duedate",
        description="Fixe la date limite d'un devoir (nbgrader db assignment add) et la redit "
        f"dans le fuseau du cours ({COURSE_TIME_ZONE}).",
    )
    parser.add_argument("assignment", metavar="DEVOIR", help="le devoir, par exemple oublier")
    parser.add_argument(
        "date", metavar="DATE", help='par exemple "2025-03-14 18:00:00 Europe/Paris"'
    )
    parser.add_grader_dir()
    args = parser.parse_args(argv)
    return finish(
        parser,
        lambda: set_duedate(args.assignment, args.date, args.grader_dir),
        "make duedate",
        args.grader_dir,
    )


if __name__ == "__main__":
    raise SystemExit(main())
