"""The suite's work units (tests/work_units.py): what runs together under xdist, in what order."""

from __future__ import annotations

import subprocess
import sys

import pytest
from helpers import REPO
from work_units import UNIT_SECONDS, unit_of


def test_every_module_is_a_unit_hub_modules_too():
    assert unit_of("tests/hub/test_roster.py::test_x") == "tests/hub/test_roster.py"
    assert unit_of("tests/hub/test_class_rush.py::test_y[1]") == "tests/hub/test_class_rush.py"
    assert unit_of("tests/grading/test_backup.py::test_z[a::b]") == "tests/grading/test_backup.py"


@pytest.mark.slow
def test_the_measured_durations_name_units_that_exist(request: pytest.FixtureRequest):
    # the whole suite collected by this session (make test) already names every unit; a run of
    # part of it asks pytest to collect the whole suite
    units = {unit_of(item.nodeid) for item in request.session.items}
    if set(UNIT_SECONDS) <= units:
        return
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
