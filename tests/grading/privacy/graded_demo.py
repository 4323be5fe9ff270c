"""The course's demo (``make demo-grading``: ``python -m grading.demo``) graded once per test run
for the erasure's demo tests (test_erase_demo.py), then copied into a test's own small class.

The demo grades the course's samples in grader/demo/: nbgrader generates the TP there, each
sample is graded in the sandbox, its feedback page written, the report made (about 15 s of CPU
for two samples). Each test used to start that command in its own class; now the run's first
test that asks starts the real command once in a copy of the course, with both samples these
tests need (``graine``, the seed answer; ``alice_en_dur``, which writes its example learner in
dur), and every test copies what it left (run_cache: keyed by the content of every input, built
once for every xdist worker). The demo is graded apart from the class it sits in (its own
folders and gradebook, the class untouched: grading.demo), so the class it was graded beside
changes nothing in it.

Three of its files name the course's folder: its nbgrader_config.py (absolute paths, written by
``grading.demo.demo_config``) and its two nbgrader logs. A copy gets the configuration that
function writes for the copy's own place, and its logs name that place: no file of the copy
names the folder the demo was graded in (checked), so nbgrader started in the copy (formgrader's
twin, ``nbgrader db student add``) writes the copy's gradebook."""

from __future__ import annotations

import inspect
import shutil
from pathlib import Path

from grading_course import copy_course, course_key, grading
from run_cache import built_once, origin_of

__all__ = ["DEMO_SAMPLES", "graded_demo"]

DEMO_SAMPLES = ("graine", "alice_en_dur")


def _grade_demo(folder: Path) -> None:
    """What ``graded_demo`` copies: the demo graded by the real command in a copy of the course
    (`folder`/cours), as `make demo-grading` grades it, on `DEMO_SAMPLES`."""
    grader = copy_course(folder / "cours")
    proc = grading(grader, "demo", "--only", *DEMO_SAMPLES)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def _master() -> Path:
    """This run's graded demo (built once for every worker); copy it, never write in it."""
    key = course_key(*map(inspect.getsource, (_grade_demo, copy_course)), *DEMO_SAMPLES)
    return built_once("demo-notee", key, _grade_demo)


def graded_demo(grader: Path) -> Path:
    """The run's graded demo copied into the course whose grading folder is `grader`, where
    `make demo-grading` puts it (grader/demo/), naming its new place; that folder."""
    from grading.classroom.paths import CONFIG, course_dirs
    from grading.demo import demo_config

    master = _master()
    graded_in = str(origin_of(master) / "cours").encode()
    demo = grader / "demo"
    shutil.copytree(master / "cours" / "grader" / "demo", demo, symlinks=True)
    course = course_dirs(grader)
    config = demo_config(course.grader_dir / CONFIG, demo, course.root)
    (demo / CONFIG).write_text(config, encoding="utf-8")  # the file keeps its mode
    for log in (demo / "rapport").glob("*.log"):
        log.write_bytes(log.read_bytes().replace(graded_in, str(course.root).encode()))
    stale = [p for p in demo.rglob("*") if p.is_file() and graded_in in p.read_bytes()]
    assert not stale, f"the demo's copy still names the folder it was graded in: {stale}"
    return demo
