"""`make grade` (from the root) and `make rapport` (from grader/) as an ordinary Unix user, on
their own fresh clone, with a Python environment every user can read (built by the shipped
grader/hub/install-course-env.sh, from Debian's python3): no root-only flag, no file left to
root, the grades right, and the grades private: another user of the machine reads none of them
(issue 32, point 11)."""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from exchange_class import readable_course_env
from grading_course import clone_head, make, register, submit, submit_carnet
from helpers import REPO
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
        register(grader, "ana", "ben", *carnets)  # what `make students` runs
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


def test_the_shared_labs_attacks_as_a_normal_user(readable_env):
    """Issue 32, point 12, for point 4: the attacks on oublier_partage's server (its disk, its
    memory, twelve aggregates at once, its roles' settings) and the lab's samples, graded in one
    batch by an unprivileged instructor (the server then runs as them, the sandbox without
    root): the outcomes of root's runs (partage_attacks.py, grader/submissions/partage/
    attendus.json); the clusters in their own ~/.cache/cours-partage (0700), each 0700 and gone
    after; nothing of theirs in the machine's /tmp but the watch's positive control. (Points 3,
    7 and 8 are graded as such an instructor in tests/labo/test_sandbox.py: GRADE_ATTACKS.)"""
    from partage_attacks import LIMIT_ATTACKS, SAMPLES

    from course.labo.partage import PARTAGE_TESTS

    user = f"pgprof{os.getpid() % 100000}"
    account = create_user(user)
    # a uid given back by a deleted account may still own files in /tmp: not this test's
    recycled = {p for p in Path("/tmp").iterdir() if p.lstat().st_uid == account.pw_uid}
    base = Path(tempfile.mkdtemp(prefix="cours-prof-pg-"))
    base.chmod(0o755)
    try:
        shutil.copytree(
            REPO / "grader" / "grading",
            base / "grader" / "grading",
            ignore=shutil.ignore_patterns("__pycache__"),
        )
        shutil.copy(Path(__file__).with_name("partage_batch.py"), base)
        subprocess.run(["chown", "-R", f"{user}:{user}", str(base)], check=True)
        expected = json.loads((SAMPLES / "attendus.json").read_text(encoding="utf-8"))
        items = {
            name: {"source": (SAMPLES / f"{name}.py").read_text(), "limits": None}
            for name in expected
        }
        items |= {name: {"source": a[0], "limits": a[1]} for name, a in LIMIT_ATTACKS.items()}
        config = {
            "items": items,
            "grader": str(base / "grader"),
            "watch_uid": account.pw_uid,
            "clusters": None,  # the default: the instructor's own
        }
        home = account.pw_dir
        done = subprocess.run(
            [shutil.which("runuser") or "runuser", "-u", user, "--"]
            + [str(readable_env / "bin" / "python"), "-I"]
            + [str(base / "partage_batch.py")],
            input=json.dumps(config),
            capture_output=True,
            text=True,
            cwd=home,
            env={"PATH": "/usr/bin:/bin", "HOME": home, "LANG": "C.UTF-8"},  # no TMPDIR
            timeout=900,
        )
        assert done.returncode == 0, done.stderr[-3000:]
        report = json.loads(done.stdout)
        results = report.pop("results")
        everything = sorted(t.id for t in PARTAGE_TESTS)
        for name, want in expected.items():
            failed = everything if want["echecs"] == "tous" else sorted(want["echecs"])
            got = results[name]
            assert (name, got["score"], got["failed"]) == (name, want["score"], failed), got
            assert got["ended"] != "error", got
        for name, (_source, _limits, statuses, score) in LIMIT_ATTACKS.items():
            got = results[name]
            assert (name, got["statuses"], got["score"]) == (name, statuses, score), got
        clusters = Path(home) / ".cache" / "cours-partage"
        assert report["clusters"] == str(clusters)
        st = clusters.stat()
        assert (st.st_uid, st.st_mode & 0o777) == (account.pw_uid, 0o700)
        made = report["clusters_made"]
        started = [name for name, got in results.items() if got["statuses"]]  # not ebauche
        assert len(made) == len(started) == len(items) - 1, made
        assert {tuple(v) for v in made.values()} == {(account.pw_uid, 0o700)}
        assert report["clusters_left"] == []
        # the positive control was seen, made by tempfile in /tmp; nothing else of theirs
        control = Path(report["control"])
        assert control.parent == Path("/tmp")
        assert report["tmp_new"] == [control.name]
        theirs = [p for p in Path("/tmp").iterdir() if p.lstat().st_uid == account.pw_uid]
        assert set(theirs) - recycled == {base}  # the copy of grader/grading this test gave them
    finally:
        remove_user(user)
        shutil.rmtree(base, ignore_errors=True)
