"""Spread the suite over pytest-xdist workers by work unit, longest first.

A work unit is a test module: its module fixtures (a generated course, a graded class, a
running hub, a JupyterLab with its Chromium) are built once, in the worker that runs it. No
module is cut in parts: the machine is saturated (2 cores, 3 workers), so a part's second
JupyterLab and Chromium (18 s of CPU) would cost more than the longest module (the browser's,
6 minutes) waits. The hub modules are units too: their hubs share the test prefix (installed
once per run, under a lock; its Unix group removed by the last session using it:
tests/hub/conftest.py) and nothing else (their own Unix users, free ports, and a server port
range each: tests/hub/classhub.py's ``port_base``), so they wait on their hubs side by side,
not in a row.

xdist's own ``loadgroup`` cannot do this under pytest 9 (it renames items through ``_nodeid``,
which pytest 9 no longer reads), so the grouping is done here, by node id, in the scheduler:
``pytest_xdist_make_scheduler`` returns a ``LoadScopeScheduling`` whose scope is the unit.
Units start longest first (``UNIT_SECONDS``, measured in a full run; an unknown unit
counts as short), which keeps the slowest unit from starting last.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

__all__ = ["UNIT_SECONDS", "unit_of"]

# Seconds each unit took in the last measured run (make test-units rewrites the file).
DURATIONS_FILE = Path(__file__).with_name("unit_seconds.json")
UNIT_SECONDS: dict[str, float] = (
    json.loads(DURATIONS_FILE.read_text(encoding="utf-8")) if DURATIONS_FILE.exists() else {}
)


def unit_of(nodeid: str) -> str:
    """The work unit of a test: its module."""
    return nodeid.split("::", 1)[0]


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """In an xdist worker, order the collection by unit, longest unit first (a stable sort: the
    tests of a unit keep their order). Every worker sorts the same way, as xdist requires."""
    if not hasattr(config, "workerinput"):  # xdist's workers have it (and numprocesses=None)
        return
    items.sort(key=lambda item: -UNIT_SECONDS.get(unit_of(item.nodeid), 0.0))


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log):  # noqa: ANN201 (xdist's type)
    from xdist.scheduler import LoadScopeScheduling

    class UnitScheduling(LoadScopeScheduling):
        """xdist's per-scope scheduling with the course's units as scopes, in collection
        order (already longest first), never more than one unit queued behind a running one."""

        def _split_scope(self, nodeid: str) -> str:
            return unit_of(nodeid)

        def _reschedule(self, node) -> None:  # noqa: ANN001 (xdist's WorkerController)
            # xdist queues a new unit once 2 tests are left; a worker holds its last test
            # until it knows the next one, so 1 is the least that never stalls. A long test
            # left at the end then delays one unit, not two.
            if node.shutting_down:
                return
            if not self.workqueue:
                node.shutdown()
                return
            if self._pending_of(self.assigned_work[node]) > 1:
                return
            self._assign_work_unit(node)

    config.option.loadscopereorder = False
    return UnitScheduling(config, log)
