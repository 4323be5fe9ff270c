"""Autograde a whole class with stock ``nbgrader autograde``, a progress bar, and optionally
several workers that never write to the same gradebook at once.

nbgrader has no parallel autograde (its issue 174) and its SQLite gradebook is not meant for
concurrent writers. With ``--jobs N`` each worker runs the stock command on its share of the
students, with its own copy of the gradebook and its own view of ``submitted/`` (symbolic links);
the results are then copied into the real gradebook by one process, through nbgrader's API.

    python -m course.labo.classe oublier [--jobs 2] [--grader-dir grader]

Without ``--grader-dir`` the folder is found from the current one (``course.labo.cours``): the
current folder if it holds ``nbgrader_config.py``, else its ``grader/`` subfolder. The
submissions and the gradebook are those of that configuration, as stock nbgrader sees them.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from tqdm import tqdm

from .cours import course_dirs, sqlite_path

__all__ = ["autograde", "main", "merge_gradebook", "submitted_students"]

BIN = Path(sys.executable).parent


def _env() -> dict[str, str]:
    return dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")


def submitted_students(submitted: Path, assignment: str) -> list[str]:
    """Students who have a submission of `assignment` in `submitted`."""
    if not submitted.is_dir():
        return []
    return sorted(p.name for p in submitted.iterdir() if (p / assignment).is_dir())


def _pump(proc: subprocess.Popen, bar: tqdm, log, lock: threading.Lock) -> None:
    for line in proc.stdout:
        with lock:
            log.write(line)
            if "] Autograding " in line:
                bar.update(1)
            elif "| ERROR]" in line:
                tqdm.write(line.rstrip())


def _start(cmd: list[str], cwd: Path) -> subprocess.Popen:
    return subprocess.Popen(
        cmd,
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        text=True,
        env=_env(),
    )


def merge_gradebook(main_url: str, worker_url: str, assignment: str, students: list[str]) -> int:
    """Copy `students`' autograded results from a worker's gradebook into the main one."""
    from nbgrader.api import Gradebook, MissingEntry

    merged = 0
    with Gradebook(main_url) as gb, Gradebook(worker_url) as wg:
        for student in students:
            try:
                wsub = wg.find_submission(assignment, student)
            except MissingEntry:
                continue
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


def autograde(
    assignment: str,
    grader_dir: Path | None = None,
    jobs: int = 1,
    extra_args: tuple[str, ...] = (),
    log_path: Path | None = None,
) -> int:
    """Run stock ``nbgrader autograde`` over every submission; return its exit status."""
    dirs = course_dirs(grader_dir)
    grader_dir = dirs.grader_dir
    submitted = dirs.submitted
    students = submitted_students(submitted, assignment)
    if not students:
        print(f"Aucun rendu de « {assignment} » dans {submitted}.")
        return 1
    if log_path is None:
        (grader_dir / "rapport").mkdir(exist_ok=True)
        log_path = grader_dir / "rapport" / "autograde.log"
    nbgrader = str(BIN / "nbgrader")
    lock = threading.Lock()
    jobs = max(1, min(jobs, len(students)))
    start = time.monotonic()
    with (
        open(log_path, "w", encoding="utf-8") as log,
        tqdm(total=len(students), desc=f"autograde {assignment}", unit="rendu") as bar,
    ):
        if jobs == 1:
            proc = _start([nbgrader, "autograde", assignment, *extra_args], grader_dir)
            _pump(proc, bar, log, lock)
            status = proc.wait()
        else:
            status = _parallel(assignment, dirs, students, jobs, extra_args, bar, log, lock)
    seconds = time.monotonic() - start
    print(
        f"{len(students)} rendus en {seconds:.1f} s ({seconds / len(students):.2f} s par "
        f"rendu, {jobs} processus) ; journal : {log_path}"
    )
    return status


def _parallel(assignment, dirs, students, jobs, extra_args, bar, log, lock) -> int:
    grader_dir = dirs.grader_dir
    main_db = sqlite_path(dirs.db_url)
    if main_db is None:
        raise ValueError(
            f"Notation en parallèle : le carnet de notes doit être un fichier "
            f"SQLite (sqlite:///...), pas {dirs.db_url}."
        )
    if not main_db.exists():
        raise FileNotFoundError(f"{main_db} manque : lancez d'abord generate_assignment.")
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
            shutil.copyfile(main_db, wdir / "gradebook.db")
            cmd = [
                str(BIN / "nbgrader"),
                "autograde",
                assignment,
                *extra_args,
                f"--CourseDirectory.submitted_directory={wdir / 'submitted'}",
                f"--CourseDirectory.db_url=sqlite:///{wdir / 'gradebook.db'}",
            ]
            proc = _start(cmd, grader_dir)
            pump = threading.Thread(target=_pump, args=(proc, bar, log, lock), daemon=True)
            pump.start()
            workers.append((proc, pump, group, wdir))
        status = 0
        for proc, pump, _group, _wdir in workers:
            status = max(status, proc.wait())
            pump.join()
        for _proc, _pump_thread, group, wdir in workers:
            merge_gradebook(
                f"sqlite:///{main_db}", f"sqlite:///{wdir / 'gradebook.db'}", assignment, group
            )
        return status
    finally:
        for proc, *_ in workers:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        shutil.rmtree(work, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="nbgrader autograde pour toute la classe, avec barre de progression."
    )
    parser.add_argument("assignment", nargs="?", default="oublier")
    parser.add_argument(
        "--jobs",
        type=int,
        default=1,
        help="processus en parallèle (chacun avec sa copie du carnet de notes)",
    )
    parser.add_argument(
        "--grader-dir",
        type=Path,
        default=None,
        help="dossier de nbgrader_config.py (défaut : le dossier courant s'il "
        "en a un, sinon son sous-dossier grader/)",
    )
    args, extra = parser.parse_known_args(argv)
    try:
        return autograde(args.assignment, args.grader_dir, args.jobs, tuple(extra))
    except FileNotFoundError as exc:
        parser.error(str(exc))


if __name__ == "__main__":
    raise SystemExit(main())
