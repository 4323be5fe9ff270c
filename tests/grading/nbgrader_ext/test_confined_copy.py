"""The collect's copier (``grading.nbgrader_ext.confined_copy``) cannot read the instructor's files
(issue 32,
point 1): asked through a link planted in the exchange or by a plain path to read the
gradebook, the real child process meets ``EACCES`` from Landlock and nothing of the gradebook
comes out; the same job unconfined reads it (the positive control: the wall, not the file's
mode, stops it). As root, as a second real Unix user who owns the gradebook, and through a real
``nbgrader collect`` on a real exchange, where the summary also names a copy made unconfined.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import sqlite3
import subprocess
import tempfile
from pathlib import Path

import pytest
from exchange_class import Student, exchange_root, release, tag, unix_users
from grading.nbgrader_ext.confined_copy import landlock_abi, run_copier
from grading.nbgrader_ext.exchange import CONFINED
from grading_course import grading, register

NBSP = "\u00a0"
COURSE = "memoire-tuteur"
DENIED = "illisible (permission refusée)"


@pytest.fixture(scope="module", autouse=True)
def landlock() -> int:
    abi, why = landlock_abi()
    if not abi:  # the fallback (unconfined, named) is tested below with confined=False
        pytest.skip(f"ce noyau n'offre pas Landlock{NBSP}: {why}")
    return abi


def _canary_gradebook(path: Path, canary: str) -> None:
    """A real SQLite gradebook holding a classmate's name found nowhere else."""
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE student (id TEXT, last_name TEXT)")
        db.execute("INSERT INTO student VALUES ('canari', ?)", (canary,))
    db.close()
    assert canary.encode() in path.read_bytes()


def _layout(base: Path, canary: str) -> dict:
    """An instructor's grader/ with its gradebook, an exchange's inbound with one student's
    copy and a link planted to grader/, a fresh staging folder; the copier's job on them."""
    grader = base / "grader"
    grader.mkdir()
    _canary_gradebook(grader / "gradebook.db", canary)
    inbound = base / "exchange" / COURSE / "inbound"
    copy = inbound / "ana+oublier+2026-12-01 10:00:00.000000 UTC+x"
    copy.mkdir(parents=True)
    (copy / "oublier.ipynb").write_text('{"cells": []}', encoding="utf-8")
    (copy / "timestamp.txt").write_text("2026-12-01 10:00:00.000000 UTC", encoding="utf-8")
    (inbound / "lien").symlink_to(grader)
    staging = base / "grader" / "submitted" / ".ramassage-test"
    staging.mkdir(parents=True)
    return {
        "inbound": str(inbound),
        "staging": str(staging),
        "confine": True,
        "notebooks": ["gradebook.db", "oublier.ipynb"],
        "limit": 10_000_000,
        "small": 4096,
        "file_mode": 0o600,
        "dir_mode": 0o700,
        "items": [
            {"folder": copy.name, "uid": None, "out": "ana"},
            {"folder": "lien/.", "uid": None, "out": "lien"},  # through the planted link
            {"folder": str(grader), "uid": None, "out": "chemin"},  # by a path
            {"folder": copy.name, "uid": None, "out": "../../../ailleurs"},  # writes outside
            {"folder": "lien/.", "uid": None, "out": "garde", "keep": True},  # for quarantine
        ],
    }


def _files_holding(root: Path, needle: bytes) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and needle in p.read_bytes()]


def _check(job: dict, answer: dict, base: Path, canary: str, abi: int) -> None:
    """The confined answer: ana's copy staged, every read of the gradebook (for the collect or
    for the quarantine) refused with EACCES, no write outside the staging folder, nothing of the
    gradebook anywhere."""
    staging = Path(job["staging"])
    assert answer["confinement"] == {"applied": True, "abi": abi, "why": ""}
    ana, link, path, outside, kept = answer["results"]
    assert (ana["problem"], ana["notebooks"]) == (None, ["oublier.ipynb"])
    assert (staging / "ana" / "oublier.ipynb").read_text() == '{"cells": []}'
    for refused in (link, path, kept):
        assert refused["problem"].endswith(DENIED), refused
        assert refused["errno"] == errno.EACCES, refused
        assert not (staging / refused["out"]).exists()
    assert outside["write_error"] == "permission refusée", outside
    assert not (base / "ailleurs").exists()
    assert canary not in json.dumps(answer)
    assert _files_holding(staging, canary.encode()) == []


def _check_unconfined(job: dict, answer: dict, base: Path, canary: str) -> None:
    """The positive control: the same job unconfined reads the gradebook every way, and
    writes outside the staging folder."""
    staging = Path(job["staging"])
    assert answer["confinement"]["applied"] is False
    _, link, path, outside, kept = answer["results"]
    for read in (link, path):
        assert (read["problem"], read["notebooks"]) == (None, ["gradebook.db"]), read
        assert canary.encode() in (staging / read["out"] / "gradebook.db").read_bytes()
    assert kept["problem"] is None and kept["write_error"] is None, kept
    assert canary.encode() in (staging / "garde" / "gradebook.db").read_bytes()
    assert outside["write_error"] is None and (base / "ailleurs" / "oublier.ipynb").is_file()


def test_the_copier_cannot_read_the_gradebook(tmp_path, landlock):
    """As root (Landlock binds root too: no capability passes the wall)."""
    canary = f"CANARI{tag()}CARNET"
    job = _layout(tmp_path, canary)
    _check(job, run_copier(job), tmp_path, canary, landlock)
    shutil.rmtree(job["staging"])
    os.mkdir(job["staging"])
    _check_unconfined(job, run_copier({**job, "confine": False}), tmp_path, canary)


_AS_USER = (
    "import json, sys; sys.path.insert(0, sys.argv[1]); "
    "from grading.nbgrader_ext.confined_copy import run_copier; "
    "print(json.dumps(run_copier(json.loads(sys.argv[2]))))"
)


@pytest.mark.slow
def test_the_copier_cannot_read_the_gradebook_as_an_ordinary_user(landlock):
    """As an ordinary instructor who owns the gradebook (so the file's mode lets them read it),
    with Debian's Python: the same wall, the same positive control."""
    if os.geteuid() != 0 or not shutil.which("runuser"):
        pytest.skip("crée un vrai utilisateur Unix\u00a0: il faut être root sous Linux")
    user = f"prof{tag()}"
    canary = f"CANARI{tag()}CARNET"
    base = Path(tempfile.mkdtemp(prefix="copie-confinee-", dir="/tmp"))
    try:
        base.chmod(0o755)
        job = _layout(base, canary)
        with unix_users([user]):
            subprocess.run(["chown", "-R", f"{user}:{user}", str(base)], check=True)
            grader_dir = Path(__file__).resolve().parents[3] / "grader"

            def as_user(job: dict) -> dict:
                run = subprocess.run(
                    ["runuser", "-u", user, "--", "/usr/bin/python3", "-c", _AS_USER]
                    + [str(grader_dir), json.dumps(job)],
                    capture_output=True,
                    text=True,
                    timeout=120,
                )
                assert run.returncode == 0, run.stderr
                return json.loads(run.stdout)

            _check(job, as_user(job), base, canary, landlock)
            shutil.rmtree(job["staging"])
            os.mkdir(job["staging"])
            subprocess.run(["chown", f"{user}:{user}", job["staging"]], check=True)
            _check_unconfined(job, as_user({**job, "confine": False}), base, canary)
    finally:
        shutil.rmtree(base, ignore_errors=True)


ASKED_BY_A_PATH = '''"""The course's collect, with a bug: eve's item is a path to grader/."""

from grading.nbgrader_ext.exchange import OwnerCheckedCollect

GRADER = {grader!r}


class PathCollect(OwnerCheckedCollect):
    def _job(self, todo, staging):
        job = super()._job(todo, staging)
        job["notebooks"] = [*job["notebooks"], "gradebook.db"]
        for item in job["items"]:
            if item["folder"].startswith({eve!r}):
                item["folder"], item["uid"] = GRADER + "/.", None
        return job
'''


def _said(proc: subprocess.CompletedProcess) -> str:
    return proc.stdout + proc.stderr


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_a_real_collect_asked_to_read_the_gradebook_cannot(course):
    """Through ``make collect``'s command on a real exchange, with ana's and eve's real copies: a
    collect whose job points eve's item at grader/ sets eve aside (permission refusée), collects
    ana, and nothing of the gradebook reaches submitted/. The positive control: the same
    collect unconfined copies the gradebook into eve's folder, and its summary says the copy
    was not confined."""
    t = tag()
    ana, eve = f"x32{t}ana", f"x32{t}eve"
    canary = f"CANARI{t}CARNET"
    # registered as `nbgrader db student add` registers (its gradebook call), in this process:
    # the set-up, not what is shown
    register(course, f"canari{t}", last_names={f"canari{t}": canary})
    gradebook = course / "gradebook.db"
    assert canary.encode() in gradebook.read_bytes()
    register(course, ana, eve)
    (course / "path_collect.py").write_text(
        ASKED_BY_A_PATH.format(grader=str(course), eve=eve), encoding="utf-8"
    )
    with unix_users([ana, eve]), exchange_root() as exchange:
        args = [f"--Exchange.root={exchange}", "--ExchangeFactory.collect=path_collect.PathCollect"]
        release(course, exchange)
        for name in (ana, eve):
            done = Student.account(name).submit(course, exchange, "graine")
            assert done.returncode == 0, _said(done)

        collected = grading(course, "collect", "oublier", *args)
        said = _said(collected)
        assert collected.returncode == 1, said
        assert f"le dossier {DENIED}" in said and eve in said, said
        log = (course / "rapport" / "collect.log").read_text(encoding="utf-8")
        assert CONFINED in log, log
        assert (course / "submitted" / ana / "oublier" / "oublier.ipynb").is_file()
        assert not (course / "submitted" / eve).exists()
        assert _files_holding(course / "submitted", canary.encode()) == []
        assert "sans confinement" not in said, said

        unconfined = grading(
            course, "collect", "oublier", *args, "--OwnerCheckedCollect.confined=False"
        )
        said = _said(unconfined)
        assert unconfined.returncode == 0, said
        stolen = course / "submitted" / eve / "oublier" / "gradebook.db"
        assert canary.encode() in stolen.read_bytes()
        assert (
            f"ℹ Copie faite sans confinement (confinement désactivé par la configuration){NBSP}:"
            in said
        ), said
