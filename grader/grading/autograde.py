"""``make grade``: stock ``nbgrader autograde`` over the class, with what it lacks: a progress
bar, a French summary checked against the gradebook (any failure named, status non-zero), links
refused (``runs.submitted_ids``), a changed submission nbgrader silently skips named, no grading
without a gradebook registering the class nor without the sandbox, a missing assignment added,
a submission nbgrader stops on named and the rest graded by a new run, not retried for a minute
if unchanged (``runs.known_failures``), ``--jobs N`` workers (``runs.autograde_runs``)."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from course.labo.sandbox import sandbox_problem

from .classroom.class_lock import class_lock
from .classroom.gradebook import gradebook_problem, sqlite_path
from .classroom.ids import normalize_id, quoted
from .classroom.paths import CourseDirs, course_dirs
from .classroom.private import make_private
from .classroom.schema_stamp import stamp_in_process
from .french.french_args import FrenchParser
from .french.system_reason import GradingError, french_message
from .nbgrader_ext.late_penalty import configured_plugin
from .nbgrader_ext.sandbox_setting import refusal
from .runs import known_failures, manual_grades, nbgrader_run, submitted_ids
from .runs.autograde_runs import (
    ClassRun,
    again_if_unfinished,
    merge_outcomes,
    parallel,
    sequential,
)
from .runs.autograde_summary import (
    DISAGREE,
    Summary,
    changed_submissions,
    disagreeing_grades,
    interrupted_gradings,
    missing_from_gradebook,
)
from .runs.nbgrader_log import FAILED
from .runs.submitted_ids import matching

__all__ = ["autograde", "main"]


def _matched_students(
    dirs: CourseDirs, assignment: str, extra_args: tuple[str, ...]
) -> tuple[list[str], submitted_ids.IdReport, tuple[str, ...]]:
    """The submissions to grade, the folders left out (``ids``), the arguments for nbgrader."""
    ids = submitted_ids.check_submitted_ids(dirs, assignment)
    everyone = submitted_ids.submitted_students(dirs.submitted, assignment)
    everyone = [s for s in everyone if s not in ids.excluded]
    pattern = nbgrader_run.student_pattern(extra_args)
    students = matching(pattern, everyone) if pattern else everyone
    if not students:
        left_out = matching(pattern, sorted(ids.excluded)) if pattern else ids.excluded
        if pattern and not left_out:
            raise GradingError(submitted_ids.unknown_student_message(assignment, pattern, everyone))
        first = f"Rien à noter dans {dirs.submitted}\u00a0: rendu(s) laissé(s) de côté."
        if not left_out:
            first = f"Aucun rendu de {quoted(assignment)} dans {dirs.submitted}."
        raise GradingError("\n".join([first, *ids.refused_lines(), *ids.lines()]))
    if pattern:  # nbgrader compares the glob with the folder names as they are: NFC now
        drop = (pattern, "--student")
        extra_args = tuple(a for a in extra_args if a not in drop and not a.endswith(f"={pattern}"))
        extra_args += (f"--student={normalize_id(pattern)}",)
    return students, ids, extra_args


def autograde(
    assignment: str,
    grader_dir: Path | None = None,
    jobs: int = 1,
    extra_args: tuple[str, ...] = (),
    force: bool = False,
    sandboxed: bool = True,
    retry_failed: bool = False,
) -> Summary:
    """Stock ``nbgrader autograde`` over every submission of `assignment` (module docstring)."""
    stamp_in_process()
    dirs = course_dirs(grader_dir)
    if sandboxed and (problem := sandbox_problem()):
        raise GradingError(refusal(problem))
    # a class registers first: else nbgrader would make a gradebook and grade any folder
    if why := gradebook_problem(dirs, empty_ok=False):
        raise GradingError(f"Rien n'a été noté\u00a0: {why}.")
    # a late-penalty setting nbgrader refuses fails every submission only after grading it,
    # and nbgrader then deletes its graded copy: refused first, nothing graded; the files' and
    # the command line's (--PointsPerDayLate.points_per_day=-1, which nbgrader reads too)
    try:
        configured_plugin(dirs.config, extra_args)
    except GradingError as exc:
        raise GradingError(f"Rien n'a été noté\u00a0: {exc}") from None
    force, extra_args = nbgrader_run.with_force(tuple(extra_args), force)
    students, ids, extra_args = _matched_students(dirs, assignment, extra_args)
    note = nbgrader_run.ensure_assignment(dirs, assignment)
    # submissions copied by hand (from e-mails) into submitted/ at the usual umask: private
    # before nbgrader reads them, under the class lock, with the configuration read once
    rights, private = make_private(dirs.submitted, "travail des élèves")
    changed = [] if force else changed_submissions(dirs, assignment, students)
    log_path = dirs.log_file("autograde")
    # our parser needs nbgrader's INFO lines: this comes last so it wins over any --log-level
    extra_args += ("--log-level=INFO",)
    db = sqlite_path(dirs.db_url)  # the failures next to the gradebook, or in grader/
    failures_file = (db.parent if db else dirs.grader_dir) / known_failures.FILE_NAME
    known_bad = {}
    if not retry_failed:
        known_bad = known_failures.recent(failures_file, assignment, dirs.submitted, students)
    to_grade = [s for s in students if s not in known_bad]
    interrupted = [] if force else interrupted_gradings(dirs, assignment, to_grade)
    jobs = max(1, min(jobs, len(to_grade) or 1))
    with nbgrader_run.warnings_to_log(log_path):
        hand_grades = manual_grades.record(dirs.db_url, dirs.autograded, assignment, students)
        start = time.monotonic()
        bar = nbgrader_run.ProgressBar(len(students), f"autograde {assignment}")
        for student in known_bad:
            bar(student, FAILED)
        try:
            with open(log_path, "w", encoding="utf-8") as log:
                run = ClassRun(assignment, dirs, extra_args, sandboxed, bar, log)
                if jobs == 1:  # also when nothing is left to grade: no run
                    # the folders left out are never shown to nbgrader: its exclusion list is
                    # split on commas (« ana,ben » would exclude ana and ben, and be graded)
                    view = bool(known_bad or ids.excluded)
                    outcomes, status = sequential(run, to_grade, view=view)
                else:
                    outcomes, status = parallel(run, to_grade, jobs)
                    left = [s for s in to_grade if s not in outcomes.decided()]
                    if status != 0 and left:  # a worker stopped on a submission: finish its share
                        more, more_status = sequential(run, left, view=True)
                        merge_outcomes(outcomes, more)
                        status = max(status, more_status)
                status = again_if_unfinished(run, outcomes, status, interrupted)
        finally:
            bar.close()
        attributed = dict(outcomes.failed)  # failures nbgrader tied to a submission: recorded
        for student in to_grade:
            if student not in outcomes.decided():
                outcomes.failed[student] = "nbgrader ne l'a pas traité (voir le journal)"
        known_failures.record(failures_file, assignment, dirs.submitted, attributed, outcomes.done)
        outcomes.failed.update(known_bad)
        outcomes.failed.update(ids.refused)  # never given to nbgrader: failed all the same
        stale = {s: "rendu modifié depuis sa notation" for s in changed if s in outcomes.skipped}
        stale.update(missing_from_gradebook(dirs.db_url, assignment, outcomes))
        for student in disagreeing_grades(dirs, assignment, outcomes.skipped):
            stale.setdefault(student, DISAGREE)
        # hand grades nbgrader reset to "needs manual grade": put back where the answer is the same
        kept = manual_grades.restore(dirs.db_url, dirs.autograded, assignment, hand_grades)
        note = "\n".join(filter(None, [rights, note, kept])) or None
    seconds = time.monotonic() - start
    return Summary(students, outcomes, stale, seconds, jobs, status, log_path, note, ids, private)


def main(argv: list[str] | None = None) -> int:
    parser = FrenchParser(
        prog="python -m grading.autograde",
        description="nbgrader autograde pour toute la classe\u00a0: barre de progression, bilan "
        "(notés, déjà notés, en échec), code de sortie non nul au moindre échec. Les options "
        "inconnues sont passées à nbgrader autograde.",
    )
    parser.add_assignment()
    parser.add_argument(
        "--jobs",
        type=int,
        metavar="N",
        default=1,
        help="processus en parallèle (chacun avec sa copie du carnet de notes)",
    )
    parser.add_argument(
        "--force",
        action="store_true",
        help="renoter tous les rendus, même déjà notés (nbgrader autograde --force)",
    )
    parser.add_argument(
        "--reessayer",
        dest="retry_failed",
        action="store_true",
        help="renoter aussi les rendus en échec il y a moins d'une minute et inchangés depuis "
        f"(sinon ils sont sautés\u00a0; voir {known_failures.FILE_NAME}, à côté du carnet de "
        "notes)",
    )
    parser.add_argument(
        "--sans-bac-a-sable",
        dest="sandboxed",
        action="store_false",
        help="DANGEREUX\u00a0: noter sans bac à sable, le code des élèves s'exécute avec vos "
        "droits (lecture du carnet de notes, des autres rendus, réseau...)",
    )
    parser.add_grader_dir(
        "dossier de nbgrader_config.py (défaut\u00a0: le dossier courant s'il "
        "en a un, sinon son sous-dossier grader/)"
    )
    args, extra = parser.parse_known_args(argv)
    if args.jobs < 1:
        parser.fail("--jobs doit valoir au moins 1", usage=True)
    try:
        with class_lock(args.grader_dir, "make grade"):
            summary = autograde(**vars(args), extra_args=tuple(extra))  # options are its params
    except FileNotFoundError as exc:
        parser.fail(french_message(exc))
    except GradingError as exc:
        print(f"✘ {exc}", file=sys.stderr)
        return 2
    if not args.sandboxed:
        print("⚠ Notation SANS bac à sable (--sans-bac-a-sable)\u00a0: à éviter.", file=sys.stderr)
    print("\n".join(summary.lines(args.assignment)))
    return 0 if summary.ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
