"""Fixtures of the tests of grader/grading (the instructor's side of the TP): sample answers,
course copies with the TP generated, a class graded with a due date, a late, a stub and a
missing submission."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from grading_course import generated_course
from read_only import Snapshot, freeze, snapshot, thaw

# this folder's helper modules (exchange_class.py, graded_class.py) import as tests/hub's do, and
# so does the erasure's small class (privacy/erase_scenes.py, test_attack_places.py uses it too)
sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parent / "privacy"))
from graded_class import GradedClass, class_in, master, put_back  # noqa: E402


@dataclass
class SharedClass:
    """A worker's shared graded class, what it held when shared, whether it is immutable."""

    graded: GradedClass
    before: Snapshot
    frozen: bool


@pytest.fixture
def course(tmp_path) -> Path:
    """A fresh course copy with the TP generated into its real gradebook; its grader/ folder."""
    return generated_course(tmp_path / "cours")


@pytest.fixture(scope="session")
def shared_graded_class(tmp_path_factory) -> Iterator[SharedClass]:
    """This worker's copy of the run's graded class, frozen (read_only.freeze), with what it
    holds."""
    shared = class_in(tmp_path_factory.mktemp("classe-partagee") / "cours")
    folder = shared.grader.parent
    before = snapshot(folder)
    frozen = freeze(folder)
    try:
        yield SharedClass(shared, before, frozen)
    finally:
        thaw(folder)


@pytest.fixture
def graded_class(shared_graded_class: SharedClass) -> Iterator[GradedClass]:
    """The graded class, shared by every test that only reads it: writing into it fails (it is
    immutable, as root too), and a test that changed it anyway fails at teardown while the class
    is put back for the next test. A test that writes uses ``graded_class_copy``."""
    yield shared_graded_class.graded
    changed = put_back(shared_graded_class.graded, shared_graded_class.before)
    if changed:
        pytest.fail(
            "this test wrote into the shared graded class (use graded_class_copy): "
            + ", ".join(changed[:20])
        )


@pytest.fixture
def graded_class_copy(tmp_path) -> GradedClass:
    """A private, writable copy of the graded class, for a test that changes it."""
    return class_in(tmp_path / "cours")


@pytest.fixture(scope="session")
def graded_class_master() -> Path:
    """The run's graded class itself (graded_class.master), for the tests of the sharing."""
    return master()
