"""Build a test fixture's files once per test run, for every xdist worker at once.

Generating the TP or grading a class takes a minute of nbgrader; copying the result takes
milliseconds. The first worker that asks builds under a file lock while the others wait, then
every test copies the result. The key is a digest of every input's bytes, so an edited source is
never served stale, and the cache lives in the run's own temporary folder, so it ends with the run.
A build happens in a folder of its own that is then renamed: nothing built may hold its path.
"""

from __future__ import annotations

import atexit
import fcntl
import hashlib
import os
import shutil
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pytest

__all__ = ["built_once", "configure", "content_digest", "origin_of", "root", "use"]

_ROOT: list[Path] = []


def configure(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The run's cache folder: beside the xdist workers' base folders (one for the whole run),
    or inside the base folder of a run without xdist."""
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent
    return use(base / "run-cache")


def use(folder: Path) -> Path:
    """Keep this process's builds in `folder` (created if need be)."""
    folder.mkdir(parents=True, exist_ok=True)
    _ROOT[:] = [folder]
    return folder


def root() -> Path:
    """The configured cache folder; without one (a helper used outside pytest's fixtures), a
    folder of this process's own, removed at exit."""
    if not _ROOT:
        folder = Path(tempfile.mkdtemp(prefix="run-cache-"))
        atexit.register(shutil.rmtree, folder, ignore_errors=True)
        _ROOT.append(folder)
    return _ROOT[0]


def content_digest(base: Path, parts: Iterable[str], *salt: str) -> str:
    """A digest of every file under `parts` (relative to `base`: names and bytes, caches left
    out) and of `salt` (what else the result depends on, e.g. the build's own source)."""
    digest = hashlib.sha256()

    def feed(data: bytes) -> None:
        digest.update(len(data).to_bytes(8, "big"))
        digest.update(data)

    for text in salt:
        feed(text.encode("utf-8"))
    for part in parts:
        path = base / part
        if not path.exists():
            raise FileNotFoundError(path)
        files = [path] if path.is_file() else sorted(path.rglob("*"))
        for file in files:
            if file.is_file() and "__pycache__" not in file.parts:
                feed(file.relative_to(base).as_posix().encode("utf-8"))
                feed(file.read_bytes())
    return digest.hexdigest()[:20]


def origin_of(done: Path) -> Path:
    """Where `done` was built before it was renamed (kept to prove nothing holds that path)."""
    return Path(done.with_name(done.name + ".origin").read_text(encoding="utf-8"))


def built_once(name: str, key: str, build: Callable[[Path], None]) -> Path:
    """``root()/<name>-<key>``, filled by ``build(folder)`` the first time a worker of this run
    asks for it; every later call, in any worker, returns it as it is. Never hand it to a test
    to write in: copy it."""
    cache = root()
    done = cache / f"{name}-{key}"
    if done.is_dir():  # it appears whole, by a rename
        return done
    with open(cache / f"{name}-{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if done.is_dir():  # another worker built it while this one waited
            return done
        work = cache / f"{name}-{key}.build-{os.getpid()}"
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir()
        try:
            build(work)
        except BaseException:
            shutil.rmtree(work, ignore_errors=True)
            raise
        done.with_name(done.name + ".origin").write_text(str(work), encoding="utf-8")
        work.rename(done)
    return done
