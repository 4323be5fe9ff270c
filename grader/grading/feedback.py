"""``make feedback``: stock ``nbgrader generate_feedback`` for the class, a summary counted from
its log, any failure non-zero. nbgrader skips an existing page unless ``timestamp.txt`` is newer
(stale after ``make grade FORCE=1`` on local submissions, or a hand grade given since): a page
older than its graded notebook, or showing other grades than the gradebook's, is derived data,
written again (``--force``) and named."""

from __future__ import annotations

import hashlib
import sys
import time
from contextlib import suppress
from pathlib import Path

from nbgrader.api import Gradebook

from .classroom.class_lock import class_lock
from .classroom.gradebook import RESTORE, gradebook_problem, gradebook_rows
from .classroom.paths import CourseDirs, course_dirs
from .french.french_args import FrenchParser
from .french.french_format import seconds_text
from .french.system_reason import GradingError, french_message
from .nbgrader_ext.late_penalty import refresh_penalties
from .privacy.erasure_register import write_private
from .runs.autograde_summary import DISAGREE, disagreeing_grades
from .runs.manual_grades import pending_hand_grades
from .runs.nbgrader_log import LogWatcher
from .runs.nbgrader_run import ProgressBar, run_logged, student_pattern
from .runs.submitted_ids import submitted_students, unknown_student_message

__all__ = ["GRADES_SHOWN", "generate_feedback", "grades_shown", "main", "stale_feedback"]


# beside a student's pages (never released: nbgrader releases the .html only): a digest of the
# grades and comments they show, so that a hand grade given since makes them stale
GRADES_SHOWN = ".notes-du-retour"
_SHOWN_SQL = (
    "SELECT sa.student_id, a.name, n.name, c.name, g.auto_score, g.manual_score, "
    "g.extra_credit, sn.late_submission_penalty, NULL FROM grade g "
    "JOIN base_cell c ON c.id = g.cell_id JOIN submitted_notebook sn ON sn.id = g.notebook_id "
    "JOIN notebook n ON n.id = sn.notebook_id "
    "JOIN submitted_assignment sa ON sa.id = sn.assignment_id "
    "JOIN assignment a ON a.id = sa.assignment_id UNION ALL "
    "SELECT sa.student_id, a.name, n.name, c.name, NULL, NULL, NULL, NULL, "
    "coalesce(m.auto_comment, '') || '|' || coalesce(m.manual_comment, '') FROM comment m "
    "JOIN base_cell c ON c.id = m.cell_id JOIN submitted_notebook sn ON sn.id = m.notebook_id "
    "JOIN notebook n ON n.id = sn.notebook_id "
    "JOIN submitted_assignment sa ON sa.id = sn.assignment_id "
    "JOIN assignment a ON a.id = sa.assignment_id"
)


def grades_shown(db_url: str, assignment: str) -> dict[str, str]:
    """Per student, a digest of what their pages of `assignment` show from the gradebook."""
    rows: dict[str, list[tuple[str, ...]]] = {}
    for row in gradebook_rows(db_url, _SHOWN_SQL) or []:
        if row[1] == assignment:
            rows.setdefault(row[0], []).append(tuple(map(str, row)))
    return {s: hashlib.sha256(repr(sorted(r)).encode()).hexdigest() for s, r in rows.items()}


def stale_feedback(
    dirs: CourseDirs, assignment: str, students: list[str], shown: dict[str, str]
) -> list[str]:
    """Students whose feedback page is missing, older than a graded notebook of theirs, or shows
    other grades than the gradebook's (`shown`: a hand grade or comment given since)."""
    stale = []
    for student in students:
        graded = dirs.autograded / student / assignment
        pages = dirs.feedback / student / assignment
        if not pages.is_dir():
            continue
        written = pages / GRADES_SHOWN
        with suppress(OSError, UnicodeDecodeError):
            written = written.read_text(encoding="ascii").strip()
        if written != shown.get(student) or any(
            not (page := pages / f"{nb.stem}.html").is_file()
            or page.stat().st_mtime < nb.stat().st_mtime
            for nb in sorted(graded.glob("*.ipynb"))
        ):
            stale.append(student)
    return stale


def generate_feedback(
    assignment: str,
    grader_dir: Path | None = None,
    extra_args: tuple[str, ...] = (),
    force: bool = False,
) -> tuple[list[str], int]:
    """Run ``nbgrader generate_feedback``; return the summary lines and the exit status."""
    dirs = course_dirs(grader_dir)
    if why := gradebook_problem(dirs):  # nbgrader would skip every page, « 0 en échec »
        raise GradingError(f"Aucune page de retour écrite\u00a0: {why}.")
    students = submitted_students(dirs.autograded, assignment, extra_args)  # those it writes
    graded = submitted_students(dirs.autograded, assignment)
    if not students and graded and (pattern := student_pattern(extra_args)):  # a typo
        raise GradingError(unknown_student_message(assignment, pattern, graded))
    if not students:
        raise GradingError(
            f"Aucune copie notée de « {assignment} » dans {dirs.autograded}\u00a0: lancez "
            "d'abord make grade."
        )
    with Gradebook(dirs.db_url) as gradebook:  # the late rule on the hand grades given since
        refresh_penalties(gradebook, dirs.config)
    shown = grades_shown(dirs.db_url, assignment)
    # nbgrader empties a page's folder before it writes it, and fails on a copy the gradebook
    # does not hold: a replaced gradebook would cost every page already released, or show an
    # older gradebook's grades beside the answer graded since
    unknown = [s for s in students if s not in shown]
    why = "aucune note au carnet de notes (a-t-il été remplacé\u00a0?)"
    if not unknown:
        unknown, why = disagreeing_grades(dirs, assignment, students), DISAGREE
    if unknown:
        named = ", ".join(unknown[:10]) + (
            f" et {len(unknown) - 10} autre(s)" if unknown[10:] else ""
        )
        raise GradingError(
            f"Aucune page de retour écrite. {len(unknown)} copie(s) notée(s) de "
            f"«\u00a0{assignment}\u00a0» ({named})\u00a0: {why}. Restaurez le carnet de notes "
            f"({RESTORE}), ou notez-les à nouveau (make grade FORCE=1). Aucune page existante "
            "n'a été touchée."
        )
    stale = [] if force else stale_feedback(dirs, assignment, students, shown)
    more = ["--force"] if (force or stale) and "--force" not in extra_args else []
    # the summary is read from nbgrader's INFO lines
    cmd = ["generate_feedback", assignment, *extra_args, *more, "--log-level=INFO"]
    log_path = dirs.log_file("feedback")
    bar = ProgressBar(len(students), f"feedback {assignment}", done_label="écrits")
    watcher = LogWatcher(assignment, students, bar)
    begin = time.monotonic()
    try:
        with open(log_path, "w", encoding="utf-8") as log:
            status = run_logged(cmd, dirs.grader_dir, watcher, log)
    finally:
        bar.close()
    out = watcher.finish()
    for student in students:
        if student not in out.decided():
            out.failed[student] = "nbgrader ne l'a pas traité (voir le journal)"
    for student in (s for s in out.done if s in shown):  # what its new pages show
        write_private(dirs.feedback / student / assignment / GRADES_SHOWN, shown[student].encode())
    lines = [
        f"{assignment}\u00a0: {len(out.done)} page(s) de retour écrite(s), {len(out.skipped)} "
        f"déjà à jour, {len(out.failed)} en échec — {seconds_text(time.monotonic() - begin)}, dans "
        f"{dirs.feedback}."
    ]
    if stale:
        lines += [
            "Pages plus anciennes que la copie notée ou que le carnet de notes, réécrites"
            f"\u00a0: {', '.join(stale)}."
        ]
    with Gradebook(dirs.db_url) as gradebook:  # their pages say « à noter », « note provisoire »
        pending = [s for s in pending_hand_grades(gradebook, assignment) if s in students]
    if pending:
        lines.append(
            f"Note(s) provisoire(s), une réponse à noter à la main (formgrader, puis make "
            f"feedback)\u00a0: {', '.join(sorted(pending))}."
        )
    if out.failed:
        lines.append(f"✘ {len(out.failed)} page(s) en échec\u00a0:")
        lines += [f"  - {s}\u00a0: {why or 'voir le journal'}" for s, why in out.failed.items()]
    if status and not out.failed:
        lines.append(f"✘ nbgrader s'est arrêté en erreur (code {status}).")
    lines.append(f"Journal complet de nbgrader\u00a0: {log_path}")
    return lines, 1 if (out.failed or status) else 0


def main(argv: list[str] | None = None) -> int:
    parser = FrenchParser(
        prog="python -m grading.feedback",
        description="nbgrader generate_feedback pour toute la classe, avec un bilan (écrits, "
        "déjà à jour, en échec). Les options inconnues sont passées à nbgrader.",
    )
    parser.add_assignment()
    parser.add_argument("--force", action="store_true", help="réécrire toutes les pages")
    parser.add_grader_dir()
    args, more = parser.parse_known_args(argv)  # more: nbgrader's
    try:
        with class_lock(args.grader_dir, "make feedback"):
            lines, status = generate_feedback(
                args.assignment, args.grader_dir, tuple(more), args.force
            )
    except FileNotFoundError as exc:
        parser.fail(french_message(exc))
    except GradingError as exc:
        print(f"✘ {exc}", file=sys.stderr)
        return 2
    print("\n".join(lines))
    return status


if __name__ == "__main__":
    raise SystemExit(main())
