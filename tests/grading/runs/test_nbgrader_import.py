"""A class command imports nbgrader's modules without its server extensions
(grading.runs.nbgrader_import), and the package still answers whatever is asked of it."""

from __future__ import annotations

import json
import resource
import subprocess
import sys

from helpers import REPO

GRADER = REPO / "grader"
PROBE = """
import json, sys
{first}
import grading.duedate  # a command that reads the gradebook through nbgrader.api
import nbgrader
heavy = ("jupyter_server", "tornado.web", "nbconvert", "bleach")
before = sorted(m for m in heavy if m in sys.modules)
ran_early = "load_courses" in vars(nbgrader)
version = nbgrader.__version__
from nbgrader._version import __version__ as real
print(json.dumps({{"before": before, "ran_early": ran_early, "same_version": version == real,
    "extension": nbgrader._jupyter_server_extension_points(), "modules": len(sys.modules)}}))
"""


def _probe(first: str = "") -> dict:
    proc = subprocess.run(
        [sys.executable, "-c", PROBE.format(first=first)],
        cwd=GRADER,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return json.loads(proc.stdout)


def test_a_class_command_skips_nbgraders_server_extensions_until_asked():
    seen = _probe()
    assert seen["before"] == [] and not seen["ran_early"]
    assert seen["same_version"] and seen["extension"] == [{"module": "nbgrader"}]


def test_a_process_that_imported_nbgrader_first_keeps_it_as_it_is():
    seen = _probe(first="import nbgrader")
    assert seen["ran_early"] and "jupyter_server" in seen["before"]


def _cpu_of(code: str, times: int = 3) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    for _ in range(times):
        subprocess.run([sys.executable, "-c", code], cwd=GRADER, check=True, timeout=120)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) / times


def test_the_start_of_a_class_command_measured(capsys):
    """Printed, not asserted (a loaded machine changes both): the CPU of importing a command
    with and without nbgrader's ``__init__``, measured in one run."""
    deferred = _cpu_of("import grading.roster_csv")
    whole = _cpu_of("import nbgrader, grading.roster_csv")
    with capsys.disabled():
        print(
            f"\nimport grading.roster_csv: {deferred:.2f} s of CPU, {whole:.2f} s with "
            f"nbgrader's __init__ (ratio {whole / deferred:.2f}x)"
        )
    assert deferred > 0 and whole > 0
