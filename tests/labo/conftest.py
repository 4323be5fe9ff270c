"""Fixtures of the tests of course/labo: the sample answers graded as nbgrader's hooks grade
them (both scenarios, in the sandbox)."""

from __future__ import annotations

import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from grading.hidden import HIDDEN

from course.labo.evaluate import Evaluation, evaluate_source
from course.labo.scenario import VISIBLE

# this folder's helper modules (grade_attacks.py) import as tests/grading's do
sys.path.insert(0, str(Path(__file__).parent))


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
