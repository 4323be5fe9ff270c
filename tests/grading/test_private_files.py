"""Grades and personal data are private files (issue 32, point 11): after a class went through
the exchange and the course's tools (collect, grade, feedback, release, export, report), a
second Unix user on the machine, in a course folder they can cross, reads none of the
gradebook, the collected, graded and feedback copies, the logs, the reports and exports, nor
the list of who handed in; they still read the course's own files (the positive control), and
the student reads their own page from the exchange."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from exchange_class import Student, exchange_root, released_copy, student_nbgrader, tag, unix_users
from grading_course import generated_course, grading, register

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1200)]


def _as(user: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["runuser", "-u", user, "--", *args],
        capture_output=True,
        text=True,
        errors="replace",  # a gradebook read by mistake is binary
        timeout=60,
        stdin=subprocess.DEVNULL,
    )


def _said(proc: subprocess.CompletedProcess) -> str:
    return proc.stdout + proc.stderr


def test_a_second_user_reads_no_grade_and_no_name():
    t = tag()
    ana, other = f"p32{t}ana", f"p32{t}cur"
    base = Path(tempfile.mkdtemp(prefix="cours-prive-"))
    try:
        base.chmod(0o755)  # a clone any user can cross, as one made with a umask of 022
        course = generated_course(base / "cours")
        for folder in (course.parent, course):
            folder.chmod(0o755)
        with unix_users([ana, other]), exchange_root() as exchange:
            args = [f"--Exchange.root={exchange}"]
            register(course, ana, last_names={ana: "Martin"})  # the set-up, in this process
            released_copy(exchange)
            student = Student.account(ana)
            done = student.submit(course, exchange, "complete_vacuum")
            assert done.returncode == 0, _said(done)
            steps = (
                ("collect", "oublier", *args),
                ("autograde", "oublier"),
                ("feedback", "oublier"),
                ("release_feedback", "oublier", *args),
                ("export",),
                ("rapport", "oublier"),
            )
            for step in steps:
                run = grading(course, *step)
                assert run.returncode == 0, (step, _said(run))

            control = _as(other, "cat", str(course / "nbgrader_config.py"))
            assert control.returncode == 0, _said(control)  # the folders can be crossed
            private = [
                course / "gradebook.db",
                course / "submitted" / ana / "oublier" / "oublier.ipynb",
                course / "autograded" / ana / "oublier" / "oublier.ipynb",
                course / "feedback" / ana / "oublier" / "oublier.html",
                *sorted((course / "rapport").iterdir()),
            ]
            names = {p.name for p in private}
            assert {"grades.csv", "notes.csv", "rapport.html", "collect.log"} <= names, names
            for path in private:
                assert path.is_file(), path
                read = _as(other, "cat", str(path))
                assert read.returncode != 0 and "Permission denied" in read.stderr, path
                assert path.stat().st_mode & 0o077 == 0, (path, oct(path.stat().st_mode))
            for folder in ("submitted", "autograded", "feedback", "rapport"):
                listed = _as(other, "ls", str(course / folder))
                assert listed.returncode != 0, (folder, _said(listed))

            fetched = student.run(
                *student_nbgrader(), "fetch_feedback", "oublier", "--course=memoire-tuteur", *args
            )
            assert fetched.returncode == 0, _said(fetched)
            assert list((student.home / "oublier" / "feedback").rglob("oublier.html"))
    finally:
        shutil.rmtree(base, ignore_errors=True)
