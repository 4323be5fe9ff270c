"""The grading sandbox, with real processes: every escape a hostile submission tries is refused
(read the gradebook, read another submission, write outside its folder, open the package's files
for writing, reach a loopback listener, allocate 2 GiB, start 300 processes, leave a detached
process), as root and as an unprivileged instructor, while a complete answer graded in the same
run still scores 10/10. The same escapes, without the sandbox, succeed: the control that shows
the submissions really try.

In the same runs, the attacks on the grade itself (``GRADE_ATTACKS``: a forged verdict, a leak
of the hidden inputs, the whole submission's memory and disk, traps for the checker, copies of
the learner's data kept beside the erasure) get exactly their score of ``attendus.json``, and none
of the messages a feedback page shows holds a hidden input, the sandbox's uid or a host path."""

from __future__ import annotations

import hashlib
import json
import os
import pwd
import secrets
import shutil
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import nbformat
import pytest
from evasions import grade_escapes, with_target
from fuites import hidden_leaks
from grade_attacks import GRADE_ATTACKS
from helpers import REPO, processes_left, processes_matching
from installed_course import installed_course

from course.labo.criteria import TESTS
from course.labo.sandbox import LIMITS, SANDBOX_UIDS, WORK_DIR, Sandbox, sandbox_problem

pytestmark = pytest.mark.timeout(900)


class Listener:
    """A TCP server on 127.0.0.1 that counts the connections it accepts."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.accepted = 0
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.accepted += 1
            conn.close()

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def listener():
    server = Listener()
    yield server
    server.close()


def _instructor_files(home: Path) -> dict[str, Path]:
    """What an instructor has: a gradebook, another student's submission, a folder of theirs."""
    gradebook = home / "grader" / "gradebook.db"
    gradebook.parent.mkdir(parents=True)
    with sqlite3.connect(gradebook) as conn:
        conn.execute("CREATE TABLE grade (student TEXT, score REAL)")
    conn.close()
    other = home / "grader" / "submitted" / "autre" / "oublier" / "oublier.ipynb"
    other.parent.mkdir(parents=True)
    nbformat.write(nbformat.v4.new_notebook(), other)
    outside = home / "dehors"
    outside.mkdir()
    return {"gradebook": gradebook, "other": other, "outside": outside}


def _sources(sample_answers, files: dict[str, Path], port: int, marker: str) -> dict[str, str]:
    targets = {
        "evasion_carnet_de_notes": str(files["gradebook"]),
        "evasion_autre_rendu": str(files["other"]),
        "evasion_ecriture_dehors": str(files["outside"]),
        "evasion_paquet_course": None,
        "evasion_reseau_local": port,
        "evasion_memoire": None,
        "evasion_processus": None,
        "evasion_processus_detache": marker,
        "triche": None,  # an empty answer: what every escape must score at most
    }
    return {name: with_target(sample_answers[name], t) for name, t in targets.items()}


def _digest(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*.py"))
    }


def _assert_attacks_fail(result: dict, expected_scores: dict, leaks) -> None:
    attacks = result["attacks"]
    assert set(attacks) == set(GRADE_ATTACKS)
    for name, got in attacks.items():
        want = expected_scores[name]
        failed = sorted(TESTS) if want["echecs"] == "tous" else sorted(want["echecs"])
        assert (name, got["score"], got["failed"]) == (name, want["score"], failed)
        assert got["outcome"] != "error"
        for message in got["messages"]:
            assert leaks(message) == [], (name, message)


def _assert_refused(result: dict, files, listener: Listener, package: Path, before, marker):
    assert result["sandbox_problem"] is None
    scores = result["scores"]
    empty = scores.pop("triche")
    assert empty == {"score": 0, "max": 3, "outcome": "graded"}
    assert scores.pop("complete") == {"score": 10, "max": 10, "outcome": "graded"}
    assert scores == {name: {"score": 0, "max": 3, "outcome": "graded"} for name in scores}, scores
    assert listener.accepted == 0
    assert not (files["outside"] / "evasion_oublier.txt").exists()
    assert _digest(package) == before
    assert processes_left(lambda uid, cmd: f"sleep {marker}" in cmd) == []


@pytest.fixture(scope="module")
def usable_sandbox():
    problem = sandbox_problem()
    assert problem is None, problem


def test_sandbox_view_and_limits(usable_sandbox, tmp_path, listener):
    """What a sandboxed process sees: its folder, the environment read-only, nothing else, a
    network of its own (its loopback leads only to itself), the documented limits."""
    probe = r"""
import json, os, resource, socket
out = {"root": sorted(os.listdir("/")), "uid": os.getuid()}
names = ("AS", "NPROC", "NOFILE", "FSIZE", "CPU", "CORE")
out["limits"] = {n: resource.getrlimit(getattr(resource, "RLIMIT_" + n))[0] for n in names}
for where in (os.getcwd(), "/usr/bin", os.path.dirname(os.__file__)):
    try:
        open(os.path.join(where, "essai.txt"), "w").close()
        out[where] = "écrit"
    except OSError as exc:
        out[where] = exc.strerror
try:
    socket.create_connection(("127.0.0.1", PORT), timeout=1)
    out["net"] = "connecté"
except OSError as exc:
    out["net"] = exc.strerror
out["interfaces"] = sorted(name for _i, name in socket.if_nameindex())
print(json.dumps(out))
"""
    work = tmp_path / "travail"
    work.mkdir()
    sandbox = Sandbox()
    sandbox.hand_over(work)
    probe = probe.replace("PORT", str(listener.port))
    command = sandbox.command([sys.executable, "-I", "-c", probe], writable=work)
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, check=True)
    seen = json.loads(done.stdout)
    assert seen["limits"] == {
        "AS": LIMITS.memory_bytes,
        "NPROC": LIMITS.processes,
        "NOFILE": LIMITS.open_files,
        "FSIZE": LIMITS.file_bytes,
        "CPU": LIMITS.cpu_seconds,
        "CORE": 0,
    }
    assert seen[str(work)] == "écrit" and (work / "essai.txt").exists()
    assert seen["/usr/bin"] == "Read-only file system"
    assert seen[os.path.dirname(os.__file__)] == "Read-only file system"
    # the host's listener is out of reach: the sandbox's 127.0.0.1 is its own
    assert seen["net"] == "Connection refused" and seen["interfaces"] == ["lo"]
    assert listener.accepted == 0
    assert "root" not in seen["root"] or os.geteuid() == 0  # /root exists only as a path to Python
    assert "home" not in seen["root"] and "etc" in seen["root"]
    if os.geteuid() == 0:
        assert seen["uid"] in SANDBOX_UIDS  # never root inside


def test_work_folder_and_tmp_are_tmpfs_of_a_fixed_size(usable_sandbox):
    """The runner's work folder and /tmp are its own tmpfs: writing past their size fails for
    the submission (ENOSPC), never fills the machine's disk."""
    probe = f"""
import json, os
out = {{}}
for where in ({WORK_DIR!r}, "/tmp"):
    st = os.statvfs(where)
    out[where] = st.f_blocks * st.f_frsize
try:
    for n in range(20):  # 200 Mio in files of 10 Mio, each under the file size limit
        with open(f"plein-{{n}}.bin", "wb") as f:
            f.write(b"x" * (10 << 20))
    out["write"] = "écrit"
except OSError as exc:
    out["write"] = exc.strerror
out["cwd"] = os.getcwd()
print(json.dumps(out))
"""
    command = Sandbox().command([sys.executable, "-I", "-c", probe], work=True)
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, check=True)
    seen = json.loads(done.stdout)
    assert seen == {
        WORK_DIR: LIMITS.work_bytes,
        "/tmp": LIMITS.tmp_bytes,
        "write": "No space left on device",
        "cwd": WORK_DIR,
    }


@pytest.mark.slow
def test_escapes_are_refused_as_root(
    usable_sandbox, sample_answers, expected_scores, tmp_path, listener
):
    files = _instructor_files(tmp_path)
    marker = f"86{secrets.randbelow(10**6):06d}.5"
    package = REPO / "course"
    before = _digest(package)
    config = {
        "sources": _sources(sample_answers, files, listener.port, marker),
        "complete": sample_answers["complete_vacuum"],
        "grader": str(REPO / "grader"),
        "sandboxed": True,
        "attacks": {name: sample_answers[name] for name in GRADE_ATTACKS},
    }
    result = grade_escapes(config)
    _assert_refused(result, files, listener, package, before, marker)
    _assert_attacks_fail(result, expected_scores, hidden_leaks(paths=(str(tmp_path),)))
    assert processes_left(lambda uid, cmd: uid in SANDBOX_UIDS) == []


@pytest.mark.slow
def test_the_same_escapes_succeed_without_the_sandbox(sample_answers, tmp_path, listener):
    """The control: run with the grader's own rights, each of these escapes works and is
    rewarded (the submission then erases the learner correctly)."""
    files = _instructor_files(tmp_path)
    sources = _sources(sample_answers, files, listener.port, "0")
    control = [
        "evasion_carnet_de_notes",
        "evasion_autre_rendu",
        "evasion_ecriture_dehors",
        "evasion_reseau_local",
    ]
    if os.access(REPO / "course" / "labo" / "criteria.py", os.W_OK):
        control.append("evasion_paquet_course")
    config = {
        "sources": {name: sources[name] for name in control},
        "complete": sample_answers["complete_vacuum"],
        "grader": str(REPO / "grader"),
        "sandboxed": False,
    }
    scores = grade_escapes(config)["scores"]
    scores.pop("complete")
    assert scores == {name: {"score": 3, "max": 3, "outcome": "graded"} for name in control}
    assert listener.accepted > 0
    assert (files["outside"] / "evasion_oublier.txt").exists()


def _create_user(name: str) -> pwd.struct_passwd:
    subprocess.run(
        ["useradd", "--create-home", "--shell", "/bin/sh", "--comment", "test bac a sable", name],
        check=True,
        capture_output=True,
    )
    account = pwd.getpwnam(name)
    os.chmod(account.pw_dir, 0o700)
    return account


def _remove_user(name: str) -> None:
    try:
        account = pwd.getpwnam(name)
    except KeyError:
        return
    for line in processes_matching(lambda uid, cmd: uid == account.pw_uid):
        try:
            os.kill(int(line.split()[0]), 9)
        except ProcessLookupError:
            pass
    subprocess.run(["userdel", "--force", "--remove", name], capture_output=True)


def _chown_tree(folder: Path, uid: int, gid: int) -> None:
    for parent, _dirs, names in os.walk(folder):
        os.chown(parent, uid, gid, follow_symlinks=False)
        for name in names:
            os.chown(os.path.join(parent, name), uid, gid, follow_symlinks=False)


@pytest.mark.skipif(os.geteuid() != 0, reason="créer un utilisateur Unix demande root")
@pytest.mark.slow
def test_escapes_are_refused_as_an_unprivileged_instructor(
    usable_sandbox, sample_answers, expected_scores, listener
):
    """An instructor without privileges, with a course environment of their own (writable by
    them: only the sandbox keeps a submission from rewriting it)."""
    name = f"bac{secrets.token_hex(4)}"
    base = Path(tempfile.mkdtemp(prefix="bac-a-sable-"))
    try:
        account = _create_user(name)
        base.chmod(0o755)
        installed = installed_course()
        shutil.copytree(installed.prefix, base / "venv", symlinks=True)
        shutil.copytree(
            REPO / "grader" / "grading",
            base / "grader" / "grading",
            ignore=shutil.ignore_patterns("__pycache__"),
        )
        (
            base / "grader" / "hub"
        ).mkdir()  # the class list's reader, which grading.classroom.ids loads
        shutil.copy(REPO / "grader" / "hub" / "roster.py", base / "grader" / "hub")
        shutil.copy(REPO / "tests" / "evasions.py", base)
        _chown_tree(base / "venv", account.pw_uid, account.pw_gid)
        home = Path(account.pw_dir)
        files = _instructor_files(home)
        _chown_tree(home, account.pw_uid, account.pw_gid)
        package = base / "venv" / installed.package.relative_to(installed.prefix)
        before = _digest(package)
        marker = f"87{secrets.randbelow(10**6):06d}.5"
        config = {
            "sources": _sources(sample_answers, files, listener.port, marker),
            "complete": sample_answers["complete_vacuum"],
            "grader": str(base / "grader"),
            "sandboxed": True,
            "attacks": {name: sample_answers[name] for name in GRADE_ATTACKS},
        }
        done = subprocess.run(
            [shutil.which("runuser") or "runuser", "-u", name, "--"]
            + [str(base / "venv" / "bin" / "python"), "-I"]
            + [str(base / "evasions.py")],
            input=json.dumps(config),
            capture_output=True,
            text=True,
            cwd=home,
            env={"PATH": "/usr/bin:/bin", "HOME": str(home), "TMPDIR": "/tmp", "LANG": "C.UTF-8"},
            timeout=850,
        )
        assert done.returncode == 0, done.stderr[-3000:]
        result = json.loads(done.stdout)
        _assert_refused(result, files, listener, package, before, marker)
        leaks = hidden_leaks(paths=(str(base), str(home)), uids=(account.pw_uid,))
        _assert_attacks_fail(result, expected_scores, leaks)
        assert processes_left(lambda uid, cmd: uid == account.pw_uid) == []
    finally:
        _remove_user(name)
        shutil.rmtree(base, ignore_errors=True)
