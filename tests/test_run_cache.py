"""The run-wide cache of the grading tests (tests/run_cache.py): one build for several processes
that ask at once, a key that follows every input's bytes, nothing left by a failed build."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import run_cache
from helpers import REPO

# A process that asks for "demo" (whose build takes a while and counts itself) and prints where
# it is, as an xdist worker asks for the generated course.
ASK = """
import sys, time
from pathlib import Path
sys.path.insert(0, {tests!r})
import run_cache
run_cache.use(Path({root!r}))

def build(folder):
    with open(Path({root!r}) / "builds.txt", "a") as fh:
        fh.write("1\\n")
    time.sleep(1.5)
    (folder / "fait.txt").write_text("fait")

print(run_cache.built_once("demo", "k1", build))
"""


def test_workers_asking_at_once_get_one_build(tmp_path):
    code = ASK.format(tests=str(REPO / "tests"), root=str(tmp_path))
    procs = [
        subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
        for _ in range(3)
    ]
    outs = [proc.communicate(timeout=120)[0].strip() for proc in procs]
    assert [proc.returncode for proc in procs] == [0, 0, 0]
    assert (tmp_path / "builds.txt").read_text() == "1\n"  # built once, by one of them
    assert set(outs) == {str(tmp_path / "demo-k1")}
    assert (tmp_path / "demo-k1" / "fait.txt").read_text() == "fait"
    origin = run_cache.origin_of(tmp_path / "demo-k1")  # built elsewhere, then renamed
    assert origin.parent == tmp_path and not origin.exists()


def test_a_failed_build_leaves_nothing_and_is_tried_again(tmp_path, monkeypatch):
    monkeypatch.setattr(run_cache, "_ROOT", [])
    run_cache.use(tmp_path)

    def broken(folder: Path) -> None:
        (folder / "moitie.txt").write_text("")
        raise RuntimeError("build failed")

    with pytest.raises(RuntimeError, match="build failed"):
        run_cache.built_once("demo", "k2", broken)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["demo-k2.lock"]
    done = run_cache.built_once("demo", "k2", lambda folder: (folder / "ok").write_text("ok"))
    assert (done / "ok").read_text() == "ok" and not (done / "moitie.txt").exists()


def test_the_key_follows_every_byte_and_name_of_the_inputs(tmp_path):
    for base in (tmp_path / "a", tmp_path / "b"):
        (base / "src" / "sub").mkdir(parents=True)
        (base / "src" / "sub" / "f.py").write_text("x = 1\n")
        (base / "conf.py").write_text("c = 1\n")
        (base / "src" / "__pycache__").mkdir()
    a, b = tmp_path / "a", tmp_path / "b"

    def key(base: Path, *salt: str) -> str:
        return run_cache.content_digest(base, ("src", "conf.py"), *salt)

    same = key(a)
    assert key(b) == same  # the same bytes elsewhere: the same key
    (b / "src" / "__pycache__" / "f.pyc").write_bytes(b"\0")
    assert key(b) == same  # caches do not count
    assert key(a, "another build") != same
    (b / "src" / "sub" / "f.py").write_text("x = 2\n")
    assert key(b) != same
    (b / "src" / "sub" / "f.py").write_text("x = 1\n")
    (b / "src" / "sub" / "f.py").rename(b / "src" / "sub" / "g.py")
    assert key(b) != same
    (b / "src" / "sub" / "g.py").rename(b / "src" / "sub" / "f.py")
    (b / "src" / "nouveau.txt").write_text("")
    assert key(b) != same
    with pytest.raises(FileNotFoundError):
        run_cache.content_digest(a, ("absent",))


def test_xdist_workers_share_the_run_s_folder(tmp_path_factory, monkeypatch):
    monkeypatch.setattr(run_cache, "_ROOT", [])
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw1")
    shared = run_cache.configure(tmp_path_factory)
    assert shared == tmp_path_factory.getbasetemp().parent / "run-cache"
    monkeypatch.delenv("PYTEST_XDIST_WORKER")
    alone = run_cache.configure(tmp_path_factory)
    assert alone == tmp_path_factory.getbasetemp() / "run-cache" and run_cache.root() == alone
