"""`make grade` (from the root) and `make rapport` (from grader/) as an ordinary Unix user, on
their own fresh clone, with a Python environment every user can read (built by the shipped
grader/hub/install-course-env.sh, from Debian's python3): no root-only flag, no file left to
root, the grades right, and the grades private: another user of the machine reads none of them
(issue 32, point 11)."""

from __future__ import annotations

import csv
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from exchange_class import readable_course_env
from grading_course import clone_head, make, submit, submit_carnet
from hub.classhub import create_user, remove_user, unix_users

pytestmark = [pytest.mark.slow, pytest.mark.timeout(2400)]


@pytest.fixture(scope="module")
def readable_env() -> Path:
    if os.geteuid() != 0 or not shutil.which("runuser"):
        pytest.skip("crée un vrai utilisateur Unix\u00a0: il faut être root sous Linux")
    return readable_course_env()


def _read_as(user: str, path: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["runuser", "-u", user, "--", "cat", str(path)],
        capture_output=True,
        text=True,
        errors="replace",
        timeout=60,
    )


def test_a_normal_user_grades_and_reports(readable_env, expected_scores):
    user = f"prof{os.getpid() % 100000}"
    account = create_user(user)
    base = Path(tempfile.mkdtemp(prefix="cours-prof-"))  # 0700 by default: made readable
    base.chmod(0o755)
    try:
        clone = clone_head(base / "cours")
        grader = clone / "grader"
        submit(grader, "ana", "complete_vacuum")
        submit(grader, "ben", "graine")
        # notebook-level attacks, graded by this unprivileged instructor: their hostile cells
        # would write a canary (they can: the folder is theirs) if they ever ran outside the
        # sandbox; the copy-pasted answer cell no longer stops the class
        canaries = base / "canaris"
        carnets = {
            "cam": "carnet_lecture_carnet_de_notes",
            "dan": "carnet_cellule_dupliquee",
            "eve": "carnet_variable_env",
        }
        for student, carnet in carnets.items():
            submit_carnet(grader, student, carnet, canaries / student)
        subprocess.run(["chown", "-R", f"{user}:{user}", str(base)], check=True)
        home = {"HOME": account.pw_dir, "USER": user, "LOGNAME": user}
        grade = make(clone, "grade", venv=readable_env, user=user, extra_env=home)
        assert grade.returncode == 0, grade.stdout[-3000:] + grade.stderr[-3000:]
        assert "5 rendu(s) noté(s), 0 déjà noté(s)" in grade.stdout
        assert canaries.is_dir() and list(canaries.iterdir()) == []
        # from grader/, where the guide has the teacher stand for nbgrader (issue 22, point 6):
        # `make grade` left grader/rapport/ (its log), which must not pass for the target
        assert (grader / "rapport").is_dir()
        report = make(
            clone, "rapport", venv=readable_env, user=user, extra_env=home, folder="grader"
        )
        assert report.returncode == 0, report.stdout[-3000:] + report.stderr[-3000:]
        notes = grader / "rapport" / "notes.csv"
        with open(notes, newline="", encoding="utf-8") as fh:
            scores = {row["student_id"]: float(row["score"]) for row in csv.DictReader(fh)}
        assert scores == {
            "ana": 10,
            "ben": expected_scores["graine"]["score"],
            **{s: expected_scores[c]["score"] for s, c in carnets.items()},
        }
        for path in (notes, grader / "gradebook.db", grader / "autograded" / "ana"):
            assert path.stat().st_uid == account.pw_uid, path
        other = f"voisin{os.getpid() % 100000}"
        with unix_users([other]):
            # the positive control: the clone's own files, through the same folders
            seen = _read_as(other, grader / "nbgrader_config.py")
            assert seen.returncode == 0, seen.stderr
            graded = grader / "autograded" / "ana" / "oublier" / "oublier.ipynb"
            page = grader / "rapport" / "rapport.html"
            for path in (notes, grader / "gradebook.db", graded, page):
                assert path.stat().st_mode & 0o077 == 0, (path, oct(path.stat().st_mode))
                denied = _read_as(other, path)
                assert denied.returncode != 0 and "Permission denied" in denied.stderr, path
    finally:
        remove_user(user)
        shutil.rmtree(base, ignore_errors=True)
