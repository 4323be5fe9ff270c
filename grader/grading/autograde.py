"""Autograde a whole class with stock ``nbgrader autograde``: a progress bar that counts real
work, an honest summary, and optionally several workers that never share a gradebook.

    python -m grading.autograde oublier [--jobs 2] [--force] [--sans-bac-a-sable] [nbgrader args]

Run it from the course root or its ``grader/`` folder (``grading.paths`` finds the course as
nbgrader does). What it adds to ``nbgrader autograde``:

- graded, skipped (already graded) and failed submissions are counted from nbgrader's own log
  (``grading.nbgrader_log``), and checked against the gradebook; any failure ends with a French
  summary naming the students and a non-zero exit status;
- a submission whose content changed since it was graded, which nbgrader would silently skip
  (it only compares ``timestamp.txt``), is named, with the flag to pass (``--force``);
- on a fresh clone, an assignment missing from the gradebook is added from its sources
  (``nbgrader generate_assignment`` into a throw-away release folder), or one French sentence
  names the command to run;
- it refuses to grade when the grading sandbox is unavailable, unless ``--sans-bac-a-sable``;
- one broken submission never stops the class: when nbgrader stops on one (its whole run ends
  there), that student is named with the reason and the others are graded by a new run without
  it; failures are recorded next to the gradebook (``grading.known_failures``) and a submission
  that failed less than a minute ago, unchanged, is not retried (``--reessayer`` forces it);
- ``--jobs N``: nbgrader has no parallel autograde (its issue 174) and its SQLite gradebook is
  not meant for concurrent writers, so each worker runs the stock command on its share of the
  students with its own copy of the gradebook and its own view of ``submitted/`` (symbolic
  links); one process then copies the results into the real gradebook through nbgrader's API.
"""

from __future__ import annotations

import argparse
import contextlib
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import nbformat

from course.labo.sandbox import sandbox_problem

from . import known_failures, manual_grades
from .ids import normalize_id, quoted
from .nbgrader_log import FAILED, LogWatcher, Outcomes
from .nbgrader_run import BIN, ProgressBar, nbgrader_env, pump, run_logged, start, tools_on_path
from .paths import CourseDirs, course_dirs, sqlite_path
from .sandbox_setting import refusal
from .submitted_ids import IdReport, check_submitted_ids, matching, unknown_student_message

__all__ = [
    "GradingError",
    "Summary",
    "autograde",
    "changed_submissions",
    "ensure_assignment",
    "main",
    "merge_gradebook",
    "sandbox_problem",
    "submitted_students",
]

CHECKSUM_NOTE = (
    "avertissements « Attribute 'checksum' … has changed » de nbgrader dans le journal\u00a0: sans "
    "gravité (issue 1961 de nbgrader), voir « Ce que disent les avertissements » dans "
    "grader/README.md"
)


class GradingError(Exception):
    """A problem the instructor must fix before grading, said in one French sentence."""


def submitted_students(submitted: Path, assignment: str) -> list[str]:
    """Students who have a submission of `assignment` in `submitted`."""
    if not submitted.is_dir():
        return []
    return sorted(p.name for p in submitted.iterdir() if (p / assignment).is_dir())


def _written_by_student(cell: dict) -> bool:
    """Cells nbgrader does not put back from the gradebook: what the student wrote."""
    meta = cell.get("metadata", {}).get("nbgrader", {})
    if meta.get("locked"):
        return False
    return not (meta.get("grade") and not meta.get("solution"))


def _notebook_changed(submitted_nb: Path, graded_nb: Path) -> bool:
    if not graded_nb.is_file():
        return True
    try:
        sub = nbformat.read(submitted_nb, as_version=4)
        graded = nbformat.read(graded_nb, as_version=4)
    except Exception:  # an unreadable file: nbgrader will say why when it grades it
        return False
    if len(sub.cells) != len(graded.cells):
        return True
    return any(
        a.cell_type != b.cell_type or (_written_by_student(a) and a.source != b.source)
        for a, b in zip(sub.cells, graded.cells, strict=True)
    )


def _timestamp(folder: Path) -> str:
    path = folder / "timestamp.txt"
    return path.read_text(encoding="utf-8").strip() if path.is_file() else ""


def changed_submissions(dirs: CourseDirs, assignment: str, students: Sequence[str]) -> list[str]:
    """Graded students whose submission differs from what was graded (a notebook's cells or
    ``timestamp.txt``): nbgrader only regrades a newer ``timestamp.txt`` without ``--force``."""
    changed = []
    for student in students:
        sub = dirs.submitted / student / assignment
        graded = dirs.autograded / student / assignment
        if not graded.is_dir():
            continue
        if _timestamp(sub) != _timestamp(graded) or any(
            _notebook_changed(nb, graded / nb.name) for nb in sorted(sub.glob("*.ipynb"))
        ):
            changed.append(student)
    return changed


def _run_quiet(cmd: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        cmd, cwd=cwd, env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL
    )


def ensure_assignment(dirs: CourseDirs, assignment: str, env: dict[str, str]) -> str | None:
    """Make sure the gradebook knows `assignment` and its notebooks (autograde needs them).

    Missing ones are added from the sources with stock ``nbgrader generate_assignment``,
    writing the release into a throw-away folder (``notebooks/`` is left alone) and keeping a
    due date already set. Returns a French note when it added something.
    """
    from nbgrader.api import Gradebook, MissingEntry

    with Gradebook(dirs.db_url) as gb:
        try:
            notebooks = len(gb.find_assignment(assignment).notebooks)
        except MissingEntry:
            notebooks = 0
    if notebooks:
        return None
    source = dirs.source / assignment
    command = f"cd {dirs.grader_dir} && nbgrader generate_assignment {assignment}"
    if not source.is_dir():
        raise GradingError(
            f"Le devoir « {assignment} » n'est pas dans le carnet de notes et ses sources "
            f"({source}) manquent\u00a0: lancez « {command} » là où ses sources se trouvent."
        )
    with tempfile.TemporaryDirectory(prefix="release-") as tmp:
        proc = _run_quiet(
            [
                str(BIN / "nbgrader"),
                "generate_assignment",
                assignment,
                f"--CourseDirectory.release_directory={tmp}",
                "--log-level=WARN",
            ],
            dirs.grader_dir,
            env,
        )
    if proc.returncode != 0:
        tail = (proc.stdout + proc.stderr).strip().splitlines()[-1:] or [""]
        raise GradingError(
            f"Le devoir « {assignment} » n'est pas dans le carnet de notes et nbgrader n'a pas "
            f"pu l'y ajouter ({tail[0]})\u00a0: lancez « {command} » pour voir l'erreur."
        )
    return (
        f"« {assignment} » manquait au carnet de notes\u00a0: ajouté depuis {source} "
        "(nbgrader generate_assignment, notebooks/ inchangé)."
    )


def merge_gradebook(main_url: str, worker_url: str, assignment: str, students: list[str]) -> int:
    """Copy `students`' autograded results from a worker's gradebook into the main one.

    Students the worker's nbgrader created (``Autograde.create_student``) are created in the main
    gradebook too, with the names and e-mail the worker has; every notebook of the submission is
    copied, grades, comments, flag and late penalty included.
    """
    from nbgrader.api import Gradebook, MissingEntry

    merged = 0
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
                gb.add_student(
                    student,
                    first_name=wstudent.first_name,
                    last_name=wstudent.last_name,
                    email=wstudent.email,
                    lms_user_id=wstudent.lms_user_id,
                )
            gb.update_or_create_submission(
                assignment, student, timestamp=wsub.timestamp, extension=wsub.extension
            )
            for wnb in wsub.notebooks:
                nb = gb.find_submission_notebook(wnb.name, assignment, student)
                nb.flagged = wnb.flagged
                nb.late_submission_penalty = wnb.late_submission_penalty
                for wgrade in wnb.grades:
                    grade = gb.find_grade(wgrade.name, wnb.name, assignment, student)
                    grade.auto_score = wgrade.auto_score
                    grade.manual_score = wgrade.manual_score
                    grade.extra_credit = wgrade.extra_credit
                    grade.needs_manual_grade = wgrade.needs_manual_grade
                for wcomment in wnb.comments:
                    comment = gb.find_comment(wcomment.name, wnb.name, assignment, student)
                    comment.auto_comment = wcomment.auto_comment
                    comment.manual_comment = wcomment.manual_comment
            gb.db.commit()
            merged += 1
    return merged


@dataclass
class Summary:
    """What one class run did, from nbgrader's log and gradebook."""

    students: list[str]
    outcomes: Outcomes
    stale: dict[str, str]  # skipped by nbgrader although their grade is out of date -> why
    seconds: float
    jobs: int
    status: int  # nbgrader's worst exit status
    log_path: Path
    note: str | None = None  # the gradebook had to be completed first
    ids: IdReport | None = None  # folders of submitted/ not matched to the class

    @property
    def ok(self) -> bool:
        ids_ok = self.ids is None or not self.ids.problems
        return not self.outcomes.failed and not self.stale and self.status == 0 and ids_ok

    def lines(self, assignment: str) -> list[str]:
        out = self.outcomes
        graded = len(out.done)
        per = f", {self.seconds / graded:.2f} s par rendu noté" if graded else ""
        lines = [self.note] if self.note else []
        lines.append(
            f"{assignment}\u00a0: {graded} rendu(s) noté(s), {len(out.skipped)} déjà noté(s) "
            f"(laissé(s) tel(s) quel(s)), {len(out.failed)} en échec — {self.seconds:.1f} s"
            f"{per}, {self.jobs} processus."
        )
        if self.stale:
            lines.append(
                f"⚠ {len(self.stale)} rendu(s) sautés par nbgrader alors que leur note n'est pas "
                "à jour\u00a0:"
            )
            lines += [f"  - {s}\u00a0: {why}" for s, why in self.stale.items()]
            lines.append(
                "  Pour les renoter\u00a0: make grade FORCE=1 (nbgrader autograde --force, qui "
                "renote tous les rendus)."
            )
        if out.failed:
            lines.append(f"✘ {len(out.failed)} rendu(s) en échec\u00a0:")
            lines += [f"  - {s}\u00a0: {why or 'voir le journal'}" for s, why in out.failed.items()]
        if self.status != 0 and not out.failed:
            lines.append(f"✘ nbgrader s'est arrêté en erreur (code {self.status}).")
        if out.checksum_warnings:
            lines.append(f"({out.checksum_warnings} {CHECKSUM_NOTE}.)")
        if self.ids is not None:
            lines += self.ids.lines()
        lines.append(f"Journal complet de nbgrader\u00a0: {self.log_path}")
        return lines


def _student_pattern(args: Sequence[str]) -> str | None:
    """The instructor's nbgrader ``--student`` option (a glob), if any."""
    pattern = None
    for k, arg in enumerate(args):
        if arg.startswith(("--student=", "--CourseDirectory.student_id=")):
            pattern = arg.split("=", 1)[1]
        elif arg in ("--student", "--CourseDirectory.student_id") and k + 1 < len(args):
            pattern = args[k + 1]
    return pattern


def _students_of(args: Sequence[str], students: list[str]) -> list[str]:
    """The students an nbgrader ``--student`` option (a glob) leaves, if the instructor gave one;
    compared in Unicode NFC."""
    pattern = _student_pattern(args)
    return matching(pattern, students) if pattern else students


def _matched_students(
    dirs: CourseDirs, assignment: str, extra_args: tuple[str, ...]
) -> tuple[list[str], IdReport, tuple[str, ...]]:
    """The submissions to grade, matched against the class (``grading.submitted_ids``); the
    folders left out are excluded from nbgrader's run too."""
    ids = check_submitted_ids(dirs, assignment)
    everyone = [s for s in submitted_students(dirs.submitted, assignment) if s not in ids.excluded]
    students = _students_of(extra_args, everyone)
    pattern = _student_pattern(extra_args)
    if not students:
        if pattern:
            raise GradingError(unknown_student_message(assignment, pattern, everyone))
        lines = [f"Aucun rendu de {quoted(assignment)} dans {dirs.submitted}."]
        raise GradingError("\n".join(lines + ids.lines()))
    if pattern:  # nbgrader compares the glob with the folder names as they are: NFC now
        extra_args = tuple(a for a in extra_args if a != pattern and not a.endswith(f"={pattern}"))
        extra_args = tuple(a for a in extra_args if a not in ("--student",))
        extra_args += (f"--student={normalize_id(pattern)}",)
    if ids.excluded:
        extra_args += (f"--CourseDirectory.student_id_exclude={','.join(sorted(ids.excluded))}",)
    return students, ids, extra_args


def autograde(
    assignment: str,
    grader_dir: Path | None = None,
    jobs: int = 1,
    extra_args: tuple[str, ...] = (),
    log_path: Path | None = None,
    force: bool = False,
    sandboxed: bool = True,
    retry_failed: bool = False,
) -> Summary:
    """Run stock ``nbgrader autograde`` over every submission of `assignment`.

    Submissions that failed less than a minute ago and have not changed are skipped (named as
    failures) unless `retry_failed`; every failure of this run is recorded for the next one.
    """
    tools_on_path()
    dirs = course_dirs(grader_dir)
    if sandboxed:
        problem = sandbox_problem()
        if problem:
            raise GradingError(refusal(problem))
    env = nbgrader_env(sandboxed)
    extra_args = tuple(extra_args)
    force = force or "--force" in extra_args or "-f" in extra_args
    if force and "--force" not in extra_args:
        extra_args += ("--force",)
    students, ids, extra_args = _matched_students(dirs, assignment, extra_args)
    note = ensure_assignment(dirs, assignment, env)
    changed = [] if force else changed_submissions(dirs, assignment, students)
    if log_path is None:
        (dirs.grader_dir / "rapport").mkdir(exist_ok=True)
        log_path = dirs.grader_dir / "rapport" / "autograde.log"
    # our parser needs nbgrader's INFO lines: this comes last so it wins over any --log-level
    extra_args += ("--log-level=INFO",)
    failures_file = _failures_file(dirs)
    known_bad = (
        {}
        if retry_failed
        else known_failures.recent(failures_file, assignment, dirs.submitted, students)
    )
    to_grade = [s for s in students if s not in known_bad]
    jobs = max(1, min(jobs, len(to_grade) or 1))
    hand_grades = manual_grades.record(dirs.db_url, dirs.autograded, assignment, students)
    lock = threading.Lock()
    start = time.monotonic()
    bar = ProgressBar(len(students), f"autograde {assignment}")
    for student in known_bad:
        bar(student, FAILED)
    try:
        with open(log_path, "w", encoding="utf-8") as log:
            if not to_grade:
                outcomes, status = Outcomes(), 0
            elif jobs == 1:
                outcomes, status = _sequential(
                    assignment, dirs, to_grade, extra_args, env, bar, log, view=bool(known_bad)
                )
            else:
                outcomes, status = _parallel(
                    assignment, dirs, to_grade, jobs, extra_args, env, bar, log, lock
                )
                left = [s for s in to_grade if s not in outcomes.decided()]
                if status != 0 and left:  # a worker stopped on a submission: finish its share
                    more, more_status = _sequential(
                        assignment, dirs, left, extra_args, env, bar, log, view=True
                    )
                    _merge(outcomes, more)
                    status = max(status, more_status)
    finally:
        bar.close()
    attributed = dict(outcomes.failed)  # failures nbgrader tied to a submission: recorded
    for student in to_grade:
        if student not in outcomes.decided():
            outcomes.failed[student] = "nbgrader ne l'a pas traité (voir le journal)"
    known_failures.record(failures_file, assignment, dirs.submitted, attributed, outcomes.done)
    outcomes.failed.update(known_bad)
    stale = {s: "rendu modifié depuis sa notation" for s in changed if s in outcomes.skipped}
    stale.update(_check_gradebook(dirs.db_url, assignment, outcomes))
    # hand grades nbgrader reset to "needs manual grade": graded again where the answer is unchanged
    kept = manual_grades.restore(dirs.db_url, dirs.autograded, assignment, hand_grades)
    note = "\n".join(filter(None, [note, manual_grades.note(*kept)])) or None
    seconds = time.monotonic() - start
    return Summary(students, outcomes, stale, seconds, jobs, status, log_path, note, ids)


STOPPED_ON = (
    "nbgrader s'est arrêté sur ce rendu (les autres ont été notés par un nouveau passage, "
    "sans lui)\u00a0: "
)
BAD_METADATA = (
    "métadonnées nbgrader invalides dans le notebook (une cellule notée copiée-collée, ou des "
    "métadonnées modifiées à la main\u00a0?)"
)


def _failures_file(dirs: CourseDirs) -> Path:
    """Next to the gradebook (the grading folder when the gradebook is not a SQLite file)."""
    db = sqlite_path(dirs.db_url)
    return (db.parent if db else dirs.grader_dir) / known_failures.FILE_NAME


class _RunWatcher(LogWatcher):
    """A LogWatcher that also keeps the student nbgrader was on and its ERROR lines: when
    nbgrader stops its whole run on one submission, that is the culprit and the reason."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.errors: list[str] = []

    @property
    def current(self) -> str | None:
        return self._current

    def feed(self, line: str) -> None:
        if "| ERROR]" in line or "| CRITICAL]" in line:
            self.errors.append(line.split("]", 1)[-1].strip())
        super().feed(line)


def _stop_reason(errors: list[str]) -> str:
    text = " ".join(errors)
    if "version of the nbgrader metadata format" in text or "old version" in text:
        return STOPPED_ON + BAD_METADATA
    last = next((e for e in reversed(errors) if e and not e.startswith("Please see")), "")
    return STOPPED_ON + (last[:200] or "voir le journal")


def _merge(outcomes: Outcomes, part: Outcomes) -> None:
    outcomes.done += [s for s in part.done if s not in outcomes.done]
    outcomes.skipped += [s for s in part.skipped if s not in outcomes.skipped]
    outcomes.failed.update(part.failed)
    outcomes.checksum_warnings += part.checksum_warnings


@contextlib.contextmanager
def _submitted_view(dirs: CourseDirs, students: list[str]):
    """A throw-away submitted/ holding only `students` (symbolic links to their folders)."""
    view = Path(tempfile.mkdtemp(prefix="autograde-rendus-"))
    try:
        for student in students:
            (view / student).symlink_to(dirs.submitted / student)
        yield view
    finally:
        shutil.rmtree(view, ignore_errors=True)


def _sequential(assignment, dirs, students, extra_args, env, bar, log, view=False):
    """One stock ``nbgrader autograde`` over `students`; if it stops on one submission (nbgrader
    ends its whole run on some errors), that one fails with the reason and the rest are graded
    by a new run without it."""
    outcomes = Outcomes()
    status = 0
    todo = list(students)
    while todo:
        watcher = _RunWatcher(assignment, todo, bar)
        cmd = [str(BIN / "nbgrader"), "autograde", assignment, *extra_args]
        with _submitted_view(dirs, todo) if view else contextlib.nullcontext() as folder:
            if folder is not None:
                cmd.insert(3, f"--CourseDirectory.submitted_directory={folder}")
            run_status = run_logged(cmd, dirs.grader_dir, env, watcher, log)
        _merge(outcomes, watcher.finish())
        status = max(status, run_status)
        left = [s for s in todo if s not in outcomes.decided()]
        culprit = watcher.current
        if run_status == 0 or not left or culprit not in left:
            break
        outcomes.failed[culprit] = _stop_reason(watcher.errors)
        bar(culprit, FAILED)
        todo = [s for s in left if s != culprit]
        view = True
    return outcomes, status


def _check_gradebook(db_url: str, assignment: str, outcomes: Outcomes) -> dict[str, str]:
    """Every graded or skipped student must have a submission in the gradebook.

    A graded one without is a failure; a skipped one without (its ``autograded/`` folder is
    there, its grades are not: a gradebook replaced or restored) is returned as out of date.
    """
    from nbgrader.api import Gradebook, MissingEntry

    missing: dict[str, str] = {}
    with Gradebook(db_url) as gb:
        for student in [*outcomes.done, *outcomes.skipped]:
            try:
                gb.find_submission(assignment, student)
            except MissingEntry:
                if student in outcomes.done:
                    outcomes.done.remove(student)
                    outcomes.failed[student] = "noté, mais absent du carnet de notes"
                else:
                    missing[student] = "copie notée présente, mais aucune note au carnet de notes"
    return missing


def _copy_gradebook(src: Path, dest: Path) -> None:
    """A consistent copy of a SQLite gradebook (SQLite's backup, not a file copy)."""
    with sqlite3.connect(src) as source, sqlite3.connect(dest) as target:
        source.backup(target)
    source.close()
    target.close()


def _parallel(assignment, dirs, students, jobs, extra_args, env, bar, log, lock):
    main_db = sqlite_path(dirs.db_url)
    if main_db is None:
        raise GradingError(
            f"Notation en parallèle\u00a0: le carnet de notes doit être un fichier SQLite "
            f"(sqlite:///...), pas {dirs.db_url}. Lancez sans --jobs."
        )
    # nbgrader.api takes seconds to import: do it while the workers grade, not after.
    threading.Thread(target=__import__, args=("nbgrader.api",), daemon=True).start()
    work = Path(tempfile.mkdtemp(prefix="autograde-parallele-"))
    workers: list = []
    try:
        for k in range(jobs):
            group = students[k::jobs]
            wdir = work / f"w{k}"
            (wdir / "submitted").mkdir(parents=True)
            for student in group:
                (wdir / "submitted" / student).symlink_to(dirs.submitted / student)
            _copy_gradebook(main_db, wdir / "gradebook.db")
            cmd = [
                str(BIN / "nbgrader"),
                "autograde",
                assignment,
                f"--CourseDirectory.submitted_directory={wdir / 'submitted'}",
                f"--CourseDirectory.db_url=sqlite:///{wdir / 'gradebook.db'}",
                *extra_args,
            ]
            watcher = LogWatcher(assignment, group, bar)
            proc = start(cmd, dirs.grader_dir, env)
            reader = threading.Thread(target=pump, args=(proc, watcher, log, lock), daemon=True)
            reader.start()
            workers.append((proc, reader, watcher, wdir))
        status = 0
        for proc, reader, _watcher, _wdir in workers:
            status = max(status, proc.wait())
            reader.join()
        outcomes = Outcomes()
        for _proc, _reader, watcher, wdir in workers:
            part = watcher.finish()
            merge_gradebook(
                f"sqlite:///{main_db}", f"sqlite:///{wdir / 'gradebook.db'}", assignment, part.done
            )
            outcomes.done += part.done
            outcomes.skipped += part.skipped
            outcomes.failed.update(part.failed)
            outcomes.checksum_warnings += part.checksum_warnings
        return outcomes, status
    finally:
        for proc, *_ in workers:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        shutil.rmtree(work, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="nbgrader autograde pour toute la classe\u00a0: barre de progression, bilan "
        "(notés, déjà notés, en échec), code de sortie non nul au moindre échec. Les options "
        "inconnues sont passées à nbgrader autograde."
    )
    parser.add_argument("assignment", nargs="?", default="oublier")
    parser.add_argument(
        "--jobs",
        type=int,
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
    parser.add_argument(
        "--grader-dir",
        type=Path,
        default=None,
        help="dossier de nbgrader_config.py (défaut\u00a0: le dossier courant s'il "
        "en a un, sinon son sous-dossier grader/)",
    )
    args, extra = parser.parse_known_args(argv)
    if args.jobs < 1:
        parser.error("--jobs doit valoir au moins 1.")
    try:
        summary = autograde(
            args.assignment,
            args.grader_dir,
            args.jobs,
            tuple(extra),
            force=args.force,
            sandboxed=args.sandboxed,
            retry_failed=args.retry_failed,
        )
    except FileNotFoundError as exc:
        parser.error(str(exc))
    except GradingError as exc:
        print(f"✘ {exc}", file=sys.stderr)
        return 2
    if not args.sandboxed:
        print("⚠ Notation SANS bac à sable (--sans-bac-a-sable)\u00a0: à éviter.", file=sys.stderr)
    print("\n".join(summary.lines(args.assignment)))
    return 0 if summary.ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
