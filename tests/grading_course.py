"""Helpers of the class tools' tests (tests/grading): copies of the course's grading parts, and
nbgrader or a class tool run the way `make` runs them."""

from __future__ import annotations

import csv
import inspect
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path

import nbformat
from helpers import REPO, free_port, http_server
from run_cache import built_once, content_digest

__all__ = [
    "BIN",
    "DUE",
    "VENV",
    "clone_head",
    "copy_course",
    "course_key",
    "damage_inside",
    "formgrader_server",
    "generated_course",
    "generated_template",
    "grading",
    "long_path",
    "make",
    "nbgrader",
    "read_below",
    "register",
    "run_tool",
    "submit",
    "tool_env",
    "tree_digest",
]

BIN = Path(sys.executable).parent
VENV = BIN.parent  # the set-up the README's `make` creates (.venv), reused by the clones
# What a course copy needs to grade the TP: its sources, the configuration, the instructor-side
# package and templates, the sample answers.
COURSE_PARTS = (
    "solutions/oublier",
    "grader/nbgrader_config.py",
    "grader/grading",
    "grader/hub/roster.py",  # the class list's one reader, which grading.classroom.ids loads
    "grader/templates",
    "grader/submissions",
)
DUE = "2025-03-14 18:00:00"
COMMAND_LOG = "COURSE_TESTS_COMMAND_LOG"  # a file: one line per command started


def tool_env(bin_dir: Path = BIN) -> dict[str, str]:
    """The environment `make` gives the class tools: the venv's bin/ first, and nothing that
    makes ``grading`` importable (the folder they run in and nbgrader_config.py do)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PATH"] = f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"
    return env


def run_tool(
    cwd: Path, *args: str, timeout: float = 900, bin_dir: Path = BIN
) -> subprocess.CompletedProcess:
    """A command run as `make` runs it (cwd, the venv's tools), output captured; named in the
    file COURSE_TESTS_COMMAND_LOG names, if set (to count what a run starts)."""
    log = os.environ.get(COMMAND_LOG)
    if log:
        test = os.environ.get("PYTEST_CURRENT_TEST", "").split(" ")[0]
        with open(log, "a", encoding="utf-8") as file:
            file.write(f"{test}\t{' '.join(Path(a).name for a in args[:3])}\n")
    return subprocess.run(
        list(args),
        cwd=cwd,
        env=tool_env(bin_dir),
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


def nbgrader(
    grader: Path, *args: str, timeout: float = 900, bin_dir: Path = BIN
) -> subprocess.CompletedProcess:
    """Stock nbgrader, started in the course's grader/ folder as `make` starts it; with
    ``bin_dir``, the nbgrader of that venv (the instructor's, made by `make setup`:
    tests/learner_env.py)."""
    return run_tool(grader, str(bin_dir / "nbgrader"), *args, timeout=timeout, bin_dir=bin_dir)


# root reads a file of mode 000; a teacher does not: without these two capabilities, root does
# not either (a test's teacher meets a student's unreadable file as on the hub)
_NO_READ_BYPASS = ("dac_override", "dac_read_search")


def grading(
    grader: Path, module: str, *args: str, bin_dir: Path = BIN, as_teacher: bool = False
) -> subprocess.CompletedProcess:
    """``python -m grading.<module>``, started in the course's grader/ folder as `make` starts
    it; with ``bin_dir``, by that venv's python; with `as_teacher`, unable to read what its
    user cannot (root too)."""
    command = [str(bin_dir / "python"), "-m", f"grading.{module}", *args]
    if as_teacher and os.geteuid() == 0:
        drop = ",".join(f"-{cap}" for cap in _NO_READ_BYPASS)
        command = ["setpriv", f"--bounding-set={drop}", f"--inh-caps={drop}", "--", *command]
    return run_tool(grader, *command, bin_dir=bin_dir)


def start_grading(grader: Path, module: str, *args: str) -> subprocess.Popen:
    """``python -m grading.<module>`` started as `grading` starts it, left running: its own
    process group (a test sends it Ctrl-C or kills it whole), its output in pipes, as text."""
    return subprocess.Popen(
        [str(BIN / "python"), "-m", f"grading.{module}", *args],
        cwd=grader,
        env=tool_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        start_new_session=True,
    )


def register(grader: Path, *students: str, last_names: dict[str, str] | None = None) -> None:
    """Register `students` in the course's gradebook: a test's set-up, not what it checks
    (``make students`` and ``nbgrader db student`` have their own tests). Written with nbgrader's
    API in this process when the gradebook exists (a command start costs a second or more of
    CPU); otherwise with one ``nbgrader db student import``, which creates it as the class's
    configuration says (a private file)."""
    last_names = last_names or {}
    gradebook = grader / "gradebook.db"
    if gradebook.is_file():
        from nbgrader.api import Gradebook

        with Gradebook(f"sqlite:///{gradebook}") as gb:
            for student in students:
                gb.update_or_create_student(student, last_name=last_names.get(student) or None)
        return
    with tempfile.TemporaryDirectory() as folder:
        roster = Path(folder) / "eleves.csv"
        with open(roster, "w", newline="", encoding="utf-8") as file:
            writer = csv.writer(file)
            writer.writerow(["id", "last_name"])
            writer.writerows([student, last_names.get(student, "")] for student in students)
        proc = nbgrader(grader, "db", "student", "import", str(roster))
    assert proc.returncode == 0, proc.stdout + proc.stderr


def copy_course(dest: Path) -> Path:
    """A copy of the course's grading parts in `dest`; returns its grader/ folder. Its compiled
    modules come along (`make test` compiles them first, copy2 keeps the sources' times, which
    is what a .pyc is checked against): a teacher's grader/ keeps the ones Python wrote at its
    first run, and where the environment sets PYTHONDONTWRITEBYTECODE nothing writes them, so
    every command started in a copy would compile the package it imports, about 0.15 s of CPU
    each time."""
    for part in COURSE_PARTS:
        src, target = REPO / part, dest / part
        target.parent.mkdir(parents=True, exist_ok=True)
        if src.is_dir():
            shutil.copytree(src, target)
        else:
            shutil.copy(src, target)
    return dest / "grader"


def _generate(folder: Path) -> None:
    """What ``generated_course`` copies: the course's parts, the TP generated by nbgrader."""
    grader = copy_course(folder / "cours")
    proc = nbgrader(grader, "generate_assignment", "oublier", "--log-level=WARN")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def course_key(*salt: str) -> str:
    """A digest of every input of a graded course: its parts and the `course` package the
    grading hooks import, with `salt` (what the build itself does)."""
    return content_digest(REPO, (*COURSE_PARTS, "course"), *salt)


def generated_template() -> Path:
    """This run's generated course (run_cache: built once for every worker, keyed by the
    content of its inputs); copy it, never write in it."""
    key = course_key(inspect.getsource(_generate), inspect.getsource(copy_course))
    return built_once("cours-genere", key, _generate) / "cours"


def generated_course(dest: Path) -> Path:
    """A course copy in `dest` with the TP generated into its own new gradebook, as
    ``nbgrader generate_assignment oublier`` leaves it; returns its grader/ folder.

    The run's first call runs the real command (about 10 s, 30 s under load); every later
    call, in any xdist worker, copies that result, which is the same bytes (nothing in it
    holds its own path: tests/grading/test_shared_course.py).
    """
    shutil.copytree(generated_template(), dest, symlinks=True)
    return dest / "grader"


def submit(grader: Path, student: str, sample: str, timestamp: str | None = None) -> Path:
    """Put the sample answer `sample` where a local class puts submissions, as `student`."""
    from grading.samples import build_submission, written_answer

    text = (REPO / "grader" / "submissions" / f"{sample}.py").read_text(encoding="utf-8")
    release = grader.parent / "notebooks" / "oublier" / "oublier.ipynb"
    folder = grader / "submitted" / student / "oublier"
    folder.mkdir(parents=True, exist_ok=True)
    nb = build_submission(release, text, written_answer(REPO, sample))
    nbformat.write(nb, folder / "oublier.ipynb")
    if timestamp:
        (folder / "timestamp.txt").write_text(timestamp)
    return folder


def submit_carnet(grader: Path, student: str, carnet: str, canary: Path) -> Path:
    """Put the notebook-level attack `carnet` (grader/submissions/carnets) where a local class
    puts submissions, as `student`; its hostile cells would write `canary` if they ever ran."""
    from grading.samples import build_carnet

    release = grader.parent / "notebooks" / "oublier" / "oublier.ipynb"
    folder = grader / "submitted" / student / "oublier"
    folder.mkdir(parents=True, exist_ok=True)
    nbformat.write(build_carnet(release, REPO, carnet, canary), folder / "oublier.ipynb")
    return folder


def tree_digest(folder: Path) -> dict[str, bytes]:
    """Every file under `folder` with its bytes (to show nothing changed)."""
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


def long_path(folder: Path, levels: int, data: bytes, name: str = "secret.txt") -> list[str]:
    """`levels` nested folders of 250 characters in `folder` (17 make about 4,300 characters:
    past PATH_MAX), made one by one from the one before, a file `name` holding `data` at the
    bottom; the names, from `folder` down."""
    folder.mkdir(parents=True, exist_ok=True)
    fd = os.open(folder, os.O_RDONLY)
    for _ in range(levels):
        os.mkdir("x" * 250, dir_fd=fd)
        inner = os.open("x" * 250, os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = inner
    out = os.open(name, os.O_WRONLY | os.O_CREAT, 0o600, dir_fd=fd)
    os.write(out, data)
    os.close(out)
    os.close(fd)
    return ["x" * 250] * levels + [name]


def read_below(folder: Path, names: list[str]) -> bytes:
    """The bytes of `folder`/`names`…, reached folder by folder (its whole path may be past
    PATH_MAX)."""
    fd = os.open(folder, os.O_RDONLY)
    try:
        for name in names[:-1]:
            inner = os.open(name, os.O_RDONLY | os.O_NOFOLLOW, dir_fd=fd)
            os.close(fd)
            fd = inner
        out = os.open(names[-1], os.O_RDONLY | os.O_NOFOLLOW, dir_fd=fd)
        with os.fdopen(out, "rb") as fh:
            return fh.read()
    finally:
        os.close(fd)


def clone_head(dest: Path) -> Path:
    """A fresh clone of this repository's HEAD in `dest` (committed files only)."""
    subprocess.run(["git", "clone", "--quiet", str(REPO), str(dest)], check=True, timeout=300)
    return dest


def make(
    clone: Path,
    *args: str,
    venv: Path = VENV,
    timeout: float = 1800,
    user: str | None = None,
    extra_env: dict[str, str] | None = None,
    folder: str = "",
) -> subprocess.CompletedProcess:
    """`make <args>` in `clone` (or its sub-folder `folder`, e.g. "grader") with an already
    set-up venv (the README's set-up is not what is tested here): its stamps are declared up to
    date, so nothing is installed."""
    stamps = [venv / ".stamp-runtime", venv / ".stamp-test"]
    cmd = ["make", "--no-print-directory", f"VENV={venv}"]
    cmd += [f"--old-file={stamp}" for stamp in stamps]
    if folder:  # grader/Makefile hands over to the root one, which make's -o does not reach
        cmd.append("OLD_FILES=" + " ".join(map(str, stamps)))
    cmd += list(args)
    if user:
        cmd = ["runuser", "-u", user, "--", *cmd]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHONPATH", "VIRTUAL_ENV"))}
    env.update(extra_env or {})
    return subprocess.run(
        cmd,
        cwd=clone / folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


@contextmanager
def formgrader_server(grader: Path, workdir: Path, token: str) -> Iterator[str]:
    """A real Jupyter server with nbgrader's formgrader on the course whose grading folder is
    `grader`, started as `make formgrader` starts it (from grader/, the course's configuration);
    its base URL, until the block ends (the server stopped by its id)."""
    port = free_port()
    env = {
        **tool_env(),
        "JUPYTER_CONFIG_DIR": str(workdir / "config"),
        "JUPYTER_RUNTIME_DIR": str(workdir / "runtime"),
    }
    cmd = [
        str(BIN / "jupyter"),
        "server",
        "--no-browser",
        "--ip=127.0.0.1",
        f"--port={port}",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={grader.parent}",
    ]
    if os.geteuid() == 0:
        cmd.append("--allow-root")
    url, log = f"http://127.0.0.1:{port}", workdir / "server.log"
    headers = {"Authorization": f"token {token}"}
    with http_server(cmd, grader, env, log, f"{url}/api/status", "Jupyter", headers):
        yield url


def damage_inside(gradebook: Path) -> None:
    """Damage a page inside the SQLite file `gradebook` (its comments table's root) where the
    counts of students and grades still read (checked): what a bad disk sector does, and what
    only SQLite's own check (quick_check) sees."""
    with closing(sqlite3.connect(gradebook)) as con:
        size = con.execute("PRAGMA page_size").fetchone()[0]
        [(root,)] = con.execute("SELECT rootpage FROM sqlite_master WHERE name = 'comment'")
    with open(gradebook, "r+b") as file:
        file.seek((root - 1) * size)
        file.write(b"\xff" * 64)
    with closing(sqlite3.connect(gradebook)) as con:  # the control: the counts still read
        con.execute("SELECT (SELECT count(*) FROM student), (SELECT count(*) FROM grade)")
