"""grading.classroom.gradebook: why a gradebook file cannot be used, before nbgrader reads it.
Files built with sqlite3 alone (the tables the counts read): the commands' own tests
(test_paths, test_backup) show the same sentences on a real class."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import pytest
from grading.classroom.gradebook import GradebookError, gradebook_counts
from grading_course import damage_inside


def _gradebook(path: Path, students: int = 3) -> Path:
    with closing(sqlite3.connect(path)) as con, con:
        con.execute("CREATE TABLE student (id TEXT PRIMARY KEY)")
        con.execute("CREATE TABLE grade (id INTEGER PRIMARY KEY, student TEXT)")
        con.execute("CREATE TABLE comment (id INTEGER PRIMARY KEY, text TEXT)")
        con.executemany("INSERT INTO student VALUES (?)", [(f"e{k}",) for k in range(students)])
        con.executemany("INSERT INTO grade (student) VALUES (?)", [("e0",), ("e1",)])
        con.executemany("INSERT INTO comment (text) VALUES (?)", [("x" * 500,)] * 20)
    return path


def test_a_sound_gradebook_is_counted(tmp_path):
    assert gradebook_counts(_gradebook(tmp_path / "gradebook.db")) == {"students": 3, "grades": 2}


def test_a_page_damaged_inside_is_named_though_the_counts_read(tmp_path):
    """Attack (stop 53): the counts read past a damaged page, so a backup took it as sound."""
    db = _gradebook(tmp_path / "gradebook.db")
    damage_inside(db)
    with pytest.raises(GradebookError) as refused:
        gradebook_counts(db)
    message = str(refused.value)
    assert message.startswith(f"le carnet de notes est illisible ({db}\u00a0: fichier abîmé, ")
    assert "SQLite\u00a0: database disk image is malformed (" in message


@pytest.mark.parametrize("kind", ["dossier", "tube", "lien vers /dev/zero"])
def test_something_there_that_is_no_file_is_not_called_missing(tmp_path, kind):
    """Attack (stop 53): a folder, a named pipe or a link to /dev/zero was « introuvable »."""
    db = tmp_path / "gradebook.db"
    if kind == "dossier":
        db.mkdir()
    elif kind == "tube":
        os.mkfifo(db)
    else:
        db.symlink_to("/dev/zero")
    with pytest.raises(GradebookError) as refused:
        gradebook_counts(db)
    assert str(refused.value).startswith(f"le carnet de notes n'est pas un fichier ({db}\u00a0: ")
    what = "un dossier" if kind == "dossier" else "ni un fichier ni un dossier"
    assert str(refused.value).endswith(f"\u00a0: {what})"), refused.value


def test_a_missing_gradebook_is_called_missing(tmp_path):
    with pytest.raises(GradebookError, match="le carnet de notes est introuvable"):
        gradebook_counts(tmp_path / "gradebook.db")


def test_a_write_stopped_midway_is_rolled_back_not_called_unreadable(tmp_path):
    """Attack (stop 53): make grade killed mid-write leaves a hot journal; every command said
    « illisible… restaurez la dernière sauvegarde », losing every grade since. SQLite's own
    recovery (what any nbgrader command does on opening it) gives the last finished write."""
    db = _gradebook(tmp_path / "gradebook.db")
    writer = (
        "import os, signal, sqlite3, sys\n"
        "con = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
        "con.execute('PRAGMA cache_size = 1')\n"
        "con.execute('BEGIN IMMEDIATE')\n"
        "for k in range(2000):\n"
        "    con.execute('INSERT INTO grade (student) VALUES (?)', ('x' * 200,))\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    subprocess.run([sys.executable, "-c", writer, str(db)], check=False)
    journal = Path(f"{db}-journal")
    assert journal.is_file() and journal.stat().st_size > 0  # hot: no writer holds it
    assert gradebook_counts(db) == {"students": 3, "grades": 2}
    assert not journal.exists() or journal.stat().st_size == 0
