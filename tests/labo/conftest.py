"""Fixtures for the TP's tests: the repository root, the sample answers, their expected scores,
and their grading as nbgrader's hooks grade them (both scenarios, in the sandbox)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from grading.hidden import HIDDEN
from helpers import REPO as ROOT

from course.labo.evaluate import Evaluation, evaluate_source
from course.labo.scenario import VISIBLE

BIN = Path(sys.executable).parent


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return ROOT


class GradedSamples:
    """Each sample graded once per session, as the hooks grade it (visible and hidden scenarios,
    sandboxed), two at a time."""

    def __init__(self, answers: dict[str, str]) -> None:
        self._answers = answers
        self._pool = ThreadPoolExecutor(max_workers=2)
        self._futures: dict[str, object] = {}
        self._lock = threading.Lock()

    def prefetch(self, names) -> None:
        with self._lock:
            for name in names:
                if name not in self._futures:
                    self._futures[name] = self._pool.submit(
                        evaluate_source,
                        self._answers[name],
                        scenarios=(VISIBLE, HIDDEN),
                        sandboxed=True,
                    )

    def __getitem__(self, name: str) -> Evaluation:
        self.prefetch([name])
        return self._futures[name].result()


@pytest.fixture(scope="session")
def graded_samples(sample_answers):
    samples = GradedSamples(sample_answers)
    yield samples
    samples._pool.shutdown(wait=True, cancel_futures=True)


def _run_nbgrader(
    grader_dir: Path, *args: str, timeout: float = 900
) -> subprocess.CompletedProcess:
    env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    env["PYTHONPATH"] = str(ROOT / "grader")  # the instructor package, as `make grade` has it
    return subprocess.run(
        [str(BIN / "nbgrader"), *args],
        cwd=grader_dir,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.fixture(scope="session")
def run_nbgrader():
    """Runs a stock nbgrader command where instructors run it: in the course's grader/ folder."""
    return _run_nbgrader
