"""``make demo-grading``: the grading cycle on the sample submissions, in ``grader/demo`` (the
course's configuration, its own folders: graded as the class, the class untouched; a
``grader/demo`` this tool did not create is refused)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from nbgrader.api import Gradebook

from .autograde import autograde
from .classroom.class_lock import class_lock
from .classroom.gradebook import sqlite_url
from .classroom.paths import (
    CONFIG,
    DEMO_FOLDER,
    DEMO_MARKER,
    CourseDirs,
    course_dirs,
    is_demo,
    load_config,
)
from .classroom.schema_stamp import stamp_in_process
from .feedback import generate_feedback
from .french.french_args import FrenchParser
from .french.system_reason import GradingError, french_message
from .nbgrader_ext.late_penalty import rule_of_config
from .report import class_table, write_report
from .runs.nbgrader_run import run_quiet
from .samples import ASSIGNMENT, write_all

__all__ = ["demo_config", "main", "run_demo"]


def demo_config(course_config: Path, demo: Path, root: Path) -> str:
    """The demo's nbgrader_config.py: the course's configuration, the demo's folders. Written
    relative to the course's `root`: nbgrader escapes the root in its regular expressions, not
    an absolute folder (a checkout named ``cours $(x)`` matched nothing)."""
    lines = [DEMO_MARKER, "", "c = get_config()", f"load_subconfig({str(course_config)!r})"]
    for name in ("release", "submitted", "autograded", "feedback", "solution"):
        lines.append(f"c.CourseDirectory.{name}_directory = {os.path.relpath(demo / name, root)!r}")
    lines.append(f"c.CourseDirectory.db_url = {sqlite_url(demo / 'gradebook.db')!r}")
    lines.append(f"c.ZipCollectApp.downloaded_directory = {str(demo / 'downloaded')!r}\n")
    return "\n".join(lines)


def run_demo(
    only: list[str] | None = None, sandboxed: bool = True, grader_dir: Path | None = None
) -> int:
    """Generate, submit the samples, grade, feedback, report: all inside ``<grader>/demo``."""
    stamp_in_process()
    course = course_dirs(grader_dir)
    demo = course.grader_dir / DEMO_FOLDER
    if demo.exists() and not is_demo(demo):
        raise GradingError(
            f"{demo} existe et n'a pas été créé par make demo-grading\u00a0: rien n'y est "
            "touché. Déplacez-le ou renommez-le pour lancer la démonstration."
        )
    demo.mkdir(exist_ok=True)
    with class_lock(demo, "make demo-grading"):  # two at once would grade the same samples
        return _run_demo(course, demo, only, sandboxed)


def _run_demo(course: CourseDirs, demo: Path, only: list[str] | None, sandboxed: bool) -> int:
    config = demo / CONFIG
    config.write_text(demo_config(course.grader_dir / CONFIG, demo, course.root), encoding="utf-8")
    dirs = course_dirs(demo)
    args = ["generate_assignment", ASSIGNMENT, "--force", "--log-level=WARN"]
    run = run_quiet(dirs.grader_dir, args, dirs.log_file(args[0]))
    if run.status != 0:
        raise GradingError(run.failure(f"nbgrader {args[0]} dans la démonstration").lstrip("✘ "))
    students = write_all(
        dirs.root, dirs.submitted, only=only, release_dir=dirs.release, overwrite=True
    )
    if not students:
        raise GradingError(f"Aucun rendu d'exemple ne correspond à {only}.")
    with Gradebook(dirs.db_url) as gb:
        for student in students:
            gb.update_or_create_student(student)
    print(f"Démonstration dans {demo}\u00a0: {len(students)} rendus d'exemple.")
    summary = autograde(ASSIGNMENT, demo, force=True, sandboxed=sandboxed)
    print("\n".join(summary.lines(ASSIGNMENT)))
    lines, feedback_status = generate_feedback(ASSIGNMENT, demo)
    print("\n".join(lines))
    # the report as grading.report.ClassReport writes it, in this process: a class named on
    # nbgrader's command line is imported before any configuration file is read, and grading is
    # importable there only from grader/ (nbgrader's folder), which the demo's is not
    with Gradebook(dirs.db_url) as gb:
        table = class_table(gb, ASSIGNMENT, dirs.autograded)
    write_report(table, dirs.report, ASSIGNMENT, rule_of_config(load_config(demo)))
    print(
        f"Rapport\u00a0: {dirs.report / 'rapport.html'}\n"
        f"Dans formgrader\u00a0: make formgrader NOTATION={demo.relative_to(dirs.root)}"
    )
    return 0 if summary.ok and feedback_status == 0 else 1


def main(argv: list[str] | None = None) -> int:
    parser = FrenchParser(
        prog="python -m grading.demo",
        description="Tout le cycle de la notation sur les rendus d'exemple, dans un cours de "
        "démonstration à part (grader/demo/)\u00a0: la vraie classe n'est jamais touchée.",
    )
    parser.add_argument("--only", nargs="*", metavar="RENDU", help="ces rendus d'exemple seulement")
    parser.add_argument(
        "--sans-bac-a-sable",
        dest="sandboxed",
        action="store_false",
        help="DANGEREUX\u00a0: noter sans bac à sable",
    )
    parser.add_grader_dir()
    args = parser.parse_args(argv)
    try:
        return run_demo(args.only or None, args.sandboxed, args.grader_dir)
    except FileNotFoundError as exc:
        parser.fail(french_message(exc))
    except GradingError as exc:
        print(f"✘ {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
