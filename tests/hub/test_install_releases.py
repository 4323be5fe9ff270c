"""Issue 22, point 10: the hub installer never removes the environment a running hub uses.

Each install that changes something goes into a new release folder, checked, then made current
by one atomic rename of a symlink; the previous release stays for a roll-back, and so does any
release a running process still uses. Run on a prefix of its own holding the shared test
prefix's release (hard links, as the installer's own copies; no build), as an admin re-runs the
installer on a live machine: a process that loaded the first release's compiled modules (as a
hub, a server or a kernel does) keeps running while two newer releases are installed, its
release keeps every byte, and only once it has stopped is that release removed. Its own prefix:
the hubs other hub tests run meanwhile (another worker) hold the shared prefix's releases.
"""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path

import pytest
from classhub import INSTRUCTORS_GROUP
from helpers import REPO, alive, stop_pids

pytestmark = [pytest.mark.hub, pytest.mark.recette("machine")]

MARKER = "# nouvelle version du cours (test des mises à jour)\n"


def _install(prefix: Path, repo: Path, exchange: Path) -> str:
    import jupyterhub

    env = {
        **os.environ,
        "COURSE_HUB_PREFIX": str(prefix),
        "COURSE_HUB_EXCHANGE": str(exchange),
        "COURSE_HUB_INSTRUCTORS_GROUP": INSTRUCTORS_GROUP,
        "JUPYTERHUB_SPEC": f"jupyterhub=={jupyterhub.__version__}",  # as the course_env fixture
    }
    proc = subprocess.run(
        ["bash", str(repo / "grader" / "hub" / "install-course-env.sh")],
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc.stdout


def _current(prefix: Path) -> Path:
    assert (prefix / "current").is_symlink()
    assert os.readlink(prefix / "env") == "current/env"
    return (prefix / "current").resolve()


def _course_copy(dest: Path) -> Path:
    """The committed course (what the installer reads), with a changed `course` package."""
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", "HEAD"], capture_output=True, check=True, timeout=120
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(dest, filter="data")
    init = dest / "course" / "__init__.py"
    init.write_text(init.read_text(encoding="utf-8") + MARKER, encoding="utf-8")
    return dest


def _own_prefix(shared: Path, prefix: Path) -> Path:
    """A prefix holding a copy of `shared`'s current release, made as the installer makes a new
    release from the current one: hard links, and its scripts naming its own release."""
    source = (shared / "current").resolve()
    release = prefix / "releases" / source.name
    release.mkdir(parents=True)
    subprocess.run(["cp", "-al", str(source / "env"), str(release / "env")], check=True)
    subprocess.run(["cp", "-a", str(source / "etc"), str(release / "etc")], check=True)
    shutil.copy(source / ".course-fingerprint", release / ".course-fingerprint")
    old, new = f"{source}/".encode(), f"{release}/".encode()
    for script in (release / "env" / "bin").iterdir():
        if script.is_symlink() or not script.is_file() or old not in script.read_bytes():
            continue
        fresh = script.with_name(f".{script.name}.new")  # a new file: the link stays untouched
        fresh.write_bytes(script.read_bytes().replace(old, new))
        shutil.copymode(script, fresh)
        os.replace(fresh, script)
    (prefix / "current").symlink_to(f"releases/{source.name}")
    for part in ("env", "etc"):
        (prefix / part).symlink_to(f"current/{part}")
    for path in (prefix, prefix / "releases"):
        path.chmod(0o755)
    return prefix


def test_a_new_release_never_touches_the_one_in_use(course_env: Path):
    # beside the shared prefix: one file system, so hard links work as in the installer
    scratch = Path(tempfile.mkdtemp(prefix="cours-versions-", dir=course_env.parent))
    scratch.chmod(0o755)
    user_pid = None
    try:
        prefix = _own_prefix(course_env, scratch / "prefix")
        first = _current(prefix)
        first_init = next(first.glob("env/lib/python*/site-packages/course/__init__.py"))
        first_bytes = first_init.read_bytes()
        # a long-lived process of the first release, as a hub: compiled modules of its env loaded
        user = subprocess.Popen(
            [
                str(prefix / "env" / "bin" / "python"),
                "-c",
                "import zmq, tornado.speedups, time; print('pret', flush=True); time.sleep(900)",
            ],
            stdout=subprocess.PIPE,
            text=True,
        )
        user_pid = user.pid
        assert user.stdout.readline().strip() == "pret"

        # 1. a new course: a new release, the first one kept as previous, untouched
        out = _install(prefix, _course_copy(scratch / "b"), scratch / "exchange")
        second = _current(prefix)
        assert second != first and (prefix / "previous").resolve() == first
        assert "version en service" in out
        assert first_init.read_bytes() == first_bytes  # hard links: no shared file rewritten
        second_init = next(second.glob("env/lib/python*/site-packages/course/__init__.py"))
        assert second_init.read_text(encoding="utf-8").endswith(MARKER)
        assert alive(user_pid)
        for release, marked in ((first, False), (second, True)):
            check = subprocess.run(
                ["runuser", "-u", "nobody", "--", str(release / "env" / "bin" / "python"), "-c",
                 "import course, inspect; print(course.__file__); print(inspect.getsource(course)"
                 f".endswith({MARKER!r}))"],
                capture_output=True, text=True, timeout=120, cwd="/",
            )  # fmt: skip
            where, ends = check.stdout.split()
            assert where.startswith(f"{release}/env/") and ends == str(marked), check.stderr
            # each release's scripts name its own Python
            shebang = (release / "env" / "bin" / "jupyterhub").read_text().splitlines()[0]
            assert shebang == f"#!{release}/env/bin/python", shebang

        # 2. back to this repository's course: a third release; the first is neither current nor
        # previous, but still in use: kept
        out = _install(prefix, REPO, scratch / "exchange")
        third = _current(prefix)
        assert third not in (first, second) and (prefix / "previous").resolve() == second
        assert f"gardée, encore utilisée / kept, still in use: {first}" in out
        assert first_init.read_bytes() == first_bytes and alive(user_pid)

        # 3. once nothing uses it, the next run removes it (current and previous stay)
        stop_pids([user_pid])
        user.wait(timeout=30)
        out = _install(prefix, REPO, scratch / "exchange")
        assert "version à jour" in out and _current(prefix) == third
        assert not first.exists() and second.is_dir()
        assert not list(prefix.glob(".*.new"))
    finally:
        if user_pid is not None and alive(user_pid):
            stop_pids([user_pid])
        shutil.rmtree(scratch, ignore_errors=True)
