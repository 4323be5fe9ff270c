"""``make rapport``: stock ``nbgrader export`` with ``grading.report.ClassReport`` (its log in
``rapport/rapport.log``), summed up in French from the file it wrote. Apart from
``grading.report`` so that it starts without pandas and nbgrader: importing those took 5 s on
the shared 2-core machine, this module's imports 0.8 s.
"""

from __future__ import annotations

import csv
from pathlib import Path

from .classroom.gradebook import gradebook_problem
from .classroom.paths import course_dirs
from .french.french_args import FrenchParser
from .french.french_csv import REPORT_NAME
from .nbgrader_ext.export_choice import CLASS_REPORT_ENV
from .runs.nbgrader_run import finish, run_quiet

__all__ = ["main", "rapport"]


def rapport(assignment: str, grader_dir: Path | None = None) -> tuple[int, list[str]]:
    """The report of `assignment` in ``rapport/``; (exit status, French summary lines)."""
    dirs = course_dirs(grader_dir)
    # else nbgrader's reason (an sqlalche.me address), or an empty report of nobody
    if why := gradebook_problem(dirs, empty_ok=False):
        return 2, [f"✘ Pas de rapport de «\u00a0{assignment}\u00a0»\u00a0: {why}."]
    args = ["export", f"--assignment={assignment}", f"--to={dirs.report}"]
    report = {CLASS_REPORT_ENV: "1"}  # grading.report.ClassReport, in any grading folder
    run = run_quiet(dirs.grader_dir, args, dirs.log_file("rapport"), report)
    if run.status:
        return 1, [run.failure(f"rapport de «\u00a0{assignment}\u00a0»")]
    out = dirs.report
    with open(out / REPORT_NAME, newline="", encoding="utf-8-sig") as fh:
        rows = list(csv.DictReader(fh, delimiter=";"))
    submitted = sum(row["rendu"] == "oui" for row in rows)
    return 0, [
        f"Rapport de «\u00a0{assignment}\u00a0»\u00a0: {len(rows)} élève(s), {submitted} avec un "
        f"rendu, {len(rows) - submitted} sans.",
        f"  - {out / 'rapport.html'}\u00a0: la page à lire",
        f"  - {out / REPORT_NAME}\u00a0: pour un tableur français",
        f"  - {out / 'notes.csv'}\u00a0: les mêmes données pour un script (colonnes de nbgrader)",
        f"Journal de nbgrader\u00a0: {run.log_path}",
    ]


def main(argv: list[str] | None = None) -> int:
    parser = FrenchParser(
        prog="python -m grading.rapport",
        description="Rapport de la classe (nbgrader export avec le greffon du cours).",
    )
    parser.add_assignment()
    parser.add_grader_dir()
    args = parser.parse_args(argv)
    return finish(
        parser, lambda: rapport(args.assignment, args.grader_dir), "make rapport", args.grader_dir
    )


if __name__ == "__main__":
    raise SystemExit(main())
