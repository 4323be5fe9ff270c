"""The suite's work units (tests/work_units.py): what runs together under xdist, in what order."""

from __future__ import annotations

import subprocess
import sys

import pytest
from helpers import REPO
from work_units import SPLIT_MODULES, UNIT_SECONDS, unit_of, units_of


def test_every_module_is_a_unit_hub_modules_too():
    assert unit_of("tests/hub/test_roster.py::test_x") == "tests/hub/test_roster.py"
    assert unit_of("tests/hub/test_class_rush.py::test_y[1]") == "tests/hub/test_class_rush.py"
    assert unit_of("tests/grading/test_backup.py::test_z[a::b]") == "tests/grading/test_backup.py"


def test_a_split_module_is_dealt_in_turn_and_nothing_else_is_split():
    module = next(iter(SPLIT_MODULES))
    parts = SPLIT_MODULES[module]
    ids = [f"{module}::test_{k}" for k in range(2 * parts + 1)] + ["tests/test_quiz.py::test_q"]
    units = units_of(ids)
    assert [units[i] for i in ids[: parts + 1]] == [f"{module}#{k}" for k in range(parts)] + [
        f"{module}#0"
    ]
    assert len({units[i] for i in ids[:-1]}) == parts
    assert units["tests/test_quiz.py::test_q"] == "tests/test_quiz.py"


@pytest.mark.slow
def test_the_measured_durations_name_units_that_exist():
    collected = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:xdist", "tests"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert collected.returncode == 0, collected.stdout[-2000:] + collected.stderr[-2000:]
    units = {unit_of(line) for line in collected.stdout.splitlines() if "::" in line}
    assert set(UNIT_SECONDS) <= units, sorted(set(UNIT_SECONDS) - units)
    assert set(SPLIT_MODULES) <= units
