"""Rewrite tests/unit_seconds.json from a JUnit report: seconds per work unit (work_units.py).

Run after a ``make test`` that wrote ``--junitxml`` (a sequential one measures each unit alone,
a parallel one as it runs in the suite); the file only orders the units
under xdist (longest first), so its figures need not be exact, only in the right order.
"""

from __future__ import annotations

import json
import sys
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

from helpers import REPO
from work_units import DURATIONS_FILE, unit_of

__all__ = ["unit_seconds"]


def _module_path(classname: str) -> str:
    """The test module of a JUnit classname: its path with dots (a class adds a last part)."""
    parts = classname.split(".")
    for n in range(len(parts), 0, -1):
        candidate = "/".join(parts[:n]) + ".py"
        if (REPO / candidate).is_file():
            return candidate
    return "/".join(parts)


def unit_seconds(junit: Path) -> dict[str, float]:
    """Seconds per unit (setup, call and teardown: JUnit's default "total" time)."""
    totals: Counter[str] = Counter()
    for case in ET.parse(junit).getroot().iter("testcase"):
        totals[unit_of(_module_path(case.get("classname", "")))] += float(case.get("time", 0))
    return {unit: round(seconds, 1) for unit, seconds in totals.most_common()}


if __name__ == "__main__":
    figures = unit_seconds(Path(sys.argv[1]))
    DURATIONS_FILE.write_text(json.dumps(figures, indent=1) + "\n", encoding="utf-8")
    print(f"{DURATIONS_FILE.name} : {len(figures)} unités, {sum(figures.values()):.0f} s")
