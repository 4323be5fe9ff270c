"""Fixtures of the tests of course/labo: the sample answers graded as nbgrader's hooks grade
them (both scenarios, in the sandbox)."""

from __future__ import annotations

import pickle
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import run_cache
from grading.nbgrader_ext.hidden import HIDDEN
from helpers import REPO

from course.labo.evaluate import Evaluation, evaluate_source
from course.labo.scenario import VISIBLE

# this folder's helper modules (grade_attacks.py) import as tests/grading's do
sys.path.insert(0, str(Path(__file__).parent))

EVALUATIONS = "evaluations.pickle"


def _grade_every_sample(answers: dict[str, str], folder: Path) -> None:
    """Every sample graded as the hooks grade it (visible and hidden scenarios, sandboxed), two
    at a time; the evaluations pickled into ``folder``."""
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = {
            name: pool.submit(evaluate_source, answer, scenarios=(VISIBLE, HIDDEN), sandboxed=True)
            for name, answer in sorted(answers.items())
        }
        graded = {name: future.result() for name, future in futures.items()}
    (folder / EVALUATIONS).write_bytes(pickle.dumps(graded))


@pytest.fixture(scope="session")
def graded_samples(sample_answers) -> dict[str, Evaluation]:
    """Each sample submission graded once per run, whichever xdist workers ask (run_cache):
    name -> its Evaluation, read from the run's cache (a fresh copy per worker)."""
    key = run_cache.content_digest(
        REPO,
        ("course", "grader/submissions", "grader/grading"),
        Path(__file__).read_text(encoding="utf-8"),
    )
    built = run_cache.built_once(
        "echantillons-notes", key, lambda folder: _grade_every_sample(sample_answers, folder)
    )
    return pickle.loads((built / EVALUATIONS).read_bytes())
