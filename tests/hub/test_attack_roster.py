"""Attacks on the class list's one reader (``grader/hub/roster.py``), with files a teacher's
spreadsheet or a truncated copy can leave: each is refused with its French reason, never a
Python traceback, by the hub's reader (``cours-roster``, the real command) and by
``make students``'s (``grading.roster_csv.read_students``, which reads through it)."""

from __future__ import annotations

import codecs
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import REPO

HUB = REPO / "grader" / "hub"
NBSP = "\u00a0"

BAD = {
    # a UTF-16 export cut in the middle of a character (a copy interrupted, a full disk)
    "utf16-tronque": (
        codecs.BOM_UTF16_LE + "id;nom\nana;Lima\n".encode("utf-16-le") + b"\x00\xd8",
        "UTF-16 illisible",
    ),
    # a cell past the csv module's field limit (a note pasted into a column)
    "cellule-geante": (
        b"id;nom;courriel\nana;Lima;" + b"x" * 200_000 + b"\n",
        f"ligne 2{NBSP}: ligne illisible",
    ),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_a_damaged_roster_is_refused_in_french_by_both_readers(name: str, tmp_path: Path):
    from grading.classroom.ids import RosterError
    from grading.roster_csv import read_students

    data, reason = BAD[name]
    path = tmp_path / "classe.csv"
    path.write_bytes(data)
    checked = subprocess.run(
        [sys.executable, str(HUB / "roster.py"), "verifier", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert checked.returncode == 2, checked.stdout + checked.stderr
    assert reason in checked.stderr and "Traceback" not in checked.stderr, checked.stderr
    with pytest.raises(RosterError, match=reason):
        read_students(path)
    # the positive control: the same file, whole, is read by both
    path.write_text("id;nom\nana;Lima\n", encoding="utf-8")
    assert [s.id for s in read_students(path)] == ["ana"]
