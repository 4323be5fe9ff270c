"""Stock ``nbgrader autograde`` over a class: one run that carries on past a submission nbgrader
stops on, or workers (nbgrader has no parallel autograde, its issue 174, and its SQLite gradebook
wants one writer), each with its own gradebook copy and ``submitted/`` of symbolic links, their
results merged through nbgrader's API (1.70x on 2 cores, 200 submissions)."""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TextIO

from nbgrader.api import Gradebook, MissingEntry

from ..classroom.gradebook import sqlite_copy, sqlite_path, sqlite_url
from ..classroom.paths import CourseDirs
from ..french.system_reason import GradingError
from .nbgrader_log import FAILED, SKIPPED, LogWatcher, Outcomes
from .nbgrader_run import ProgressBar, pump, run_logged, start, stop

__all__ = [
    "KERNEL_START",
    "ClassRun",
    "again_if_unfinished",
    "merge_gradebook",
    "merge_outcomes",
    "parallel",
    "sequential",
]

STOPPED_ON = (
    "nbgrader s'est arrêté sur ce rendu (les autres ont été notés par un nouveau passage, "
    "sans lui)\u00a0: "
)
# A kernel that ends before its first reply ran none of the student's code: jupyter_client picks
# its TCP ports free, then the kernel binds them, and another process (the other worker's
# kernel, a student's kernel on a hub) can take one meanwhile (seen: « Address already in use »
# with --jobs 2). Not the submission's fault: graded again, never recorded as a known failure.
KERNEL_START = "Kernel died before replying to kernel_info"
BAD_METADATA = (
    "métadonnées nbgrader invalides dans le notebook (une cellule notée copiée-collée, ou des "
    "métadonnées modifiées à la main\u00a0?)"
)


@dataclass
class ClassRun:
    """What every nbgrader run of one class grading shares."""

    assignment: str
    dirs: CourseDirs
    extra_args: tuple[str, ...]  # nbgrader's, passed through
    sandboxed: bool
    bar: ProgressBar
    log: TextIO  # nbgrader's whole log, every run's lines
    lock: threading.Lock = field(default_factory=threading.Lock)  # guards `log`

    def command(self, *options: str) -> list[str]:
        """nbgrader's arguments for one run."""
        return ["autograde", self.assignment, *options, *self.extra_args]


def _stop_reason(errors: list[str]) -> str:
    text = " ".join(errors)
    if "version of the nbgrader metadata format" in text or "old version" in text:
        return STOPPED_ON + BAD_METADATA
    last = next((e for e in reversed(errors) if e and not e.startswith("Please see")), "")
    return STOPPED_ON + (last[:200] or "voir le journal")


def merge_outcomes(outcomes: Outcomes, part: Outcomes) -> None:
    """Add what one run decided to `outcomes`."""
    outcomes.done += [s for s in part.done if s not in outcomes.done]
    outcomes.skipped += [s for s in part.skipped if s not in outcomes.skipped]
    outcomes.failed.update(part.failed)
    outcomes.checksum_warnings += part.checksum_warnings


def merge_gradebook(main_url: str, worker_url: str, assignment: str, students: list[str]) -> None:
    """Copy `students`' autograded results, and the students it created, from a worker's copy."""

    def copy(source, target, *fields: str) -> None:
        for name in fields:
            setattr(target, name, getattr(source, name))

    with Gradebook(main_url) as gb, Gradebook(worker_url) as wg:
        for student in students:
            try:
                wsub = wg.find_submission(assignment, student)
            except MissingEntry:
                continue
            wstudent = wg.find_student(student)
            try:
                gb.find_student(student)
            except MissingEntry:
                names = ("first_name", "last_name", "email", "lms_user_id")
                gb.add_student(student, **{n: getattr(wstudent, n) for n in names})
            gb.update_or_create_submission(
                assignment, student, timestamp=wsub.timestamp, extension=wsub.extension
            )
            # what autograde writes; a grade, a comment or a flag given in formgrader while the
            # workers ran stays (their copies hold what the gradebook held when they started)
            for wnb in wsub.notebooks:
                nb = gb.find_submission_notebook(wnb.name, assignment, student)
                copy(wnb, nb, "late_submission_penalty")
                for wgrade in wnb.grades:
                    grade = gb.find_grade(wgrade.name, wnb.name, assignment, student)
                    copy(wgrade, grade, "auto_score")
                    by_hand = ("manual_score", "extra_credit")
                    if all(getattr(grade, n) == getattr(wgrade, n) for n in by_hand):
                        copy(wgrade, grade, "needs_manual_grade")  # not graded by hand since
                for wcomment in wnb.comments:
                    comment = gb.find_comment(wcomment.name, wnb.name, assignment, student)
                    copy(wcomment, comment, "auto_comment")
            gb.db.commit()


@contextlib.contextmanager
def _submitted_view(dirs: CourseDirs, students: list[str]) -> Iterator[Path]:
    """A throw-away submitted/ holding only `students` (symbolic links to their folders)."""
    view = Path(tempfile.mkdtemp(prefix="autograde-rendus-"))
    try:
        for student in students:
            (view / student).symlink_to(dirs.submitted / student)
        yield view
    finally:
        shutil.rmtree(view, ignore_errors=True)


def sequential(run: ClassRun, students: list[str], view: bool = False) -> tuple[Outcomes, int]:
    """One stock ``nbgrader autograde`` over `students`; a submission it stops on fails with the
    reason, the rest graded by a new run. `view`: show nbgrader only `students`' folders."""
    outcomes, status, todo = Outcomes(), 0, list(students)
    while todo:
        watcher = LogWatcher(run.assignment, todo, run.bar)
        with _submitted_view(run.dirs, todo) if view else contextlib.nullcontext() as folder:
            options = [f"--CourseDirectory.submitted_directory={folder}"] if folder else []
            run_status = run_logged(
                run.command(*options), run.dirs.grader_dir, watcher, run.log, run.sandboxed
            )
        merge_outcomes(outcomes, watcher.finish())
        status = max(status, run_status)
        left = [s for s in todo if s not in outcomes.decided()]
        culprit = watcher.current
        if run_status == 0 or not left or culprit not in left:
            break
        outcomes.failed[culprit] = _stop_reason(watcher.errors)
        run.bar(culprit, FAILED)
        todo = [s for s in left if s != culprit]
        view = True
    return outcomes, status


def parallel(run: ClassRun, students: list[str], jobs: int) -> tuple[Outcomes, int]:
    """`jobs` runs at once on every `jobs`-th student, each with its own gradebook copy, merged."""
    main_db = sqlite_path(run.dirs.db_url)
    if main_db is None:
        raise GradingError(
            f"Notation en parallèle\u00a0: le carnet de notes doit être un fichier SQLite "
            f"(sqlite:///...), pas {run.dirs.db_url}. Lancez sans --jobs."
        )
    workers: list[tuple[subprocess.Popen, threading.Thread, LogWatcher, Path]] = []
    with contextlib.ExitStack() as cleanup:  # on any exit: workers killed, copies removed
        work = Path(tempfile.mkdtemp(prefix="autograde-parallele-"))
        cleanup.callback(shutil.rmtree, work, ignore_errors=True)
        for k in range(jobs):
            group = students[k::jobs]
            view = cleanup.enter_context(_submitted_view(run.dirs, group))
            db = work / f"w{k}.db"  # its own gradebook copy
            sqlite_copy(main_db, db)
            cmd = run.command(
                f"--CourseDirectory.submitted_directory={view}",
                f"--CourseDirectory.db_url={sqlite_url(db)}",
            )
            watcher = LogWatcher(run.assignment, group, run.bar)
            proc = start(cmd, run.dirs.grader_dir, run.sandboxed)
            cleanup.callback(stop, proc)
            reader = threading.Thread(
                target=pump, args=(proc, watcher, run.log, run.lock), daemon=True
            )
            reader.start()
            workers.append((proc, reader, watcher, db))
        status = 0
        for proc, reader, _, _ in workers:
            status = max(status, proc.wait())
            reader.join()
        outcomes = Outcomes()
        for _, _, watcher, db in workers:
            part = watcher.finish()
            merge_gradebook(run.dirs.db_url, sqlite_url(db), run.assignment, part.done)
            merge_outcomes(outcomes, part)
        return outcomes, status


def again_if_unfinished(
    run: ClassRun, outcomes: Outcomes, status: int, interrupted: list[str]
) -> int:
    """Grade once more, in one run each, the submissions whose kernel ended at its start
    (KERNEL_START), and, forced, those a run stopped midway (Ctrl-C, the machine shut down) left
    graded without their automatic tests' scores (`interrupted`), which nbgrader skips as
    graded; the runs' status, theirs taken back when nothing else failed."""
    died = [s for s, why in outcomes.failed.items() if KERNEL_START in why]
    cut = [s for s in interrupted if s in outcomes.skipped]
    others = [s for s in outcomes.failed if s not in died]
    for student in died:
        del outcomes.failed[student]
        run.bar.again(student, FAILED, "son noyau s'était arrêté au démarrage")
    for student in cut:
        outcomes.skipped.remove(student)
        run.bar.again(student, SKIPPED, "sa notation avait été interrompue")
    if died and not others:
        status = 0  # the runs failed on those kernels only
    forced = replace(run, extra_args=(*run.extra_args, "--force"))
    for students, this_run in ((died, run), (cut, forced)):
        if students:
            more, more_status = sequential(this_run, students, view=True)
            merge_outcomes(outcomes, more)
            status = max(status, more_status)
    return status
