"""``make export``: stock ``nbgrader export`` to ``rapport/grades.csv`` (its log in
``rapport/export.log``), then the same rows in ``rapport/export-tableur.csv`` for a French
spreadsheet (``grading.french.french_csv``).

    python -m grading.export            (from grader/, or the course root)
"""

from __future__ import annotations

from pathlib import Path

from nbgrader.api import Gradebook

from .classroom.gradebook import gradebook_problem
from .classroom.paths import course_dirs
from .classroom.schema_stamp import stamp_in_process
from .french.french_args import FrenchParser
from .french.french_csv import EXPORT_NAME, write_export
from .nbgrader_ext.export_choice import CLASS_REPORT_ENV
from .nbgrader_ext.safe_export import SafeCsvExport
from .runs.nbgrader_run import finish, run_quiet, warnings_to_log

__all__ = ["export", "main"]


def export(grader_dir: Path | None = None) -> tuple[int, list[str]]:
    """Both files in ``rapport/``; (exit status, French summary lines)."""
    dirs = course_dirs(grader_dir)
    if why := gradebook_problem(dirs, empty_ok=False):  # else an sqlalche.me address
        return 2, [f"✘ Aucune note exportée\u00a0: {why}."]
    log_path, out = dirs.log_file("export"), dirs.report
    csv_only = {CLASS_REPORT_ENV: "0"}  # whatever the teacher's shell holds
    run = run_quiet(
        dirs.grader_dir, ["export", "--to", str(out / "grades.csv")], log_path, csv_only
    )
    if run.status:
        return 1, [run.failure("export des notes")]
    stamp_in_process()
    with warnings_to_log(run.log_path), Gradebook(dirs.db_url) as gradebook:
        rows = write_export(SafeCsvExport().rows(gradebook), french := out / EXPORT_NAME)
    students = len({row[3] for row in rows})
    assignments = len({row[0] for row in rows})
    return 0, [
        f"Notes exportées\u00a0: {len(rows)} ligne(s), {students} élève(s), "
        f"{assignments} devoir(s).",
        f"  - {out / 'grades.csv'}\u00a0: le CSV de nbgrader (virgules, point décimal, UTC)",
        f"  - {french}\u00a0: pour un tableur français («\u00a0;\u00a0», virgule décimale, "
        "heure de Paris)",
        f"Journal de nbgrader\u00a0: {run.log_path}",
    ]


def main(argv: list[str] | None = None) -> int:
    parser = FrenchParser(
        prog="python -m grading.export",
        description="Exporte toutes les notes (nbgrader export) et leur version pour un tableur "
        "français.",
    )
    parser.add_grader_dir()
    args = parser.parse_args(argv)
    return finish(parser, lambda: export(args.grader_dir), "make export", args.grader_dir)


if __name__ == "__main__":
    raise SystemExit(main())
