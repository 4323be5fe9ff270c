"""The guard of folders shared read-only between tests (tests/read_only.py): a frozen folder
refuses every write, root's too, until thawed; a change is found by name wherever it is."""

from __future__ import annotations

import os
import sqlite3

import pytest
from read_only import changes, freeze, snapshot, thaw


def _tree(folder):
    (folder / "grader" / "feedback").mkdir(parents=True)
    (folder / "grader" / "feedback" / "page.html").write_text("<p>ana</p>")
    with sqlite3.connect(folder / "grader" / "gradebook.db") as con:
        con.execute("CREATE TABLE grade (score REAL)")
        con.execute("INSERT INTO grade VALUES (1.0)")
    con.close()
    (folder / "lien").symlink_to("grader/feedback/page.html")


def test_a_frozen_folder_refuses_writes_and_reads_as_before(tmp_path):
    _tree(tmp_path)
    before = snapshot(tmp_path)
    if not freeze(tmp_path):
        pytest.skip("chattr +i impossible ici (système de fichiers ou droits)")
    try:
        with pytest.raises(OSError):
            (tmp_path / "grader" / "export.csv").write_text("x")
        with pytest.raises(OSError):
            (tmp_path / "grader" / "feedback" / "page.html").write_text("changed")
        with pytest.raises(OSError):
            (tmp_path / "grader" / "feedback" / "page.html").unlink()
        with pytest.raises(sqlite3.OperationalError):
            with sqlite3.connect(tmp_path / "grader" / "gradebook.db") as con:
                con.execute("UPDATE grade SET score = 0")
        # reading works, SQLite included
        con = sqlite3.connect(f"file:{tmp_path / 'grader' / 'gradebook.db'}?mode=ro", uri=True)
        assert con.execute("SELECT score FROM grade").fetchall() == [(1.0,)]
        con.close()
        assert changes(before, tmp_path) == []
    finally:
        thaw(tmp_path)
    (tmp_path / "grader" / "export.csv").write_text("x")  # thawed: writable again
    assert changes(before, tmp_path) == ["added: grader/export.csv"]


def test_changes_names_every_added_removed_or_changed_entry(tmp_path):
    _tree(tmp_path)
    before = snapshot(tmp_path)
    assert changes(before, tmp_path) == []
    (tmp_path / "grader" / "feedback" / "page.html").write_text("<p>ben</p>")  # same size
    (tmp_path / "grader" / "nouveau").mkdir()
    (tmp_path / "lien").unlink()
    (tmp_path / "lien").symlink_to("/etc/passwd")
    os.chmod(tmp_path / "grader" / "gradebook.db", 0o600)
    assert changes(before, tmp_path) == [
        "added: grader/nouveau",
        "changed: grader/feedback/page.html",
        "changed: grader/gradebook.db",
        "changed: lien",
    ]
    (tmp_path / "grader" / "feedback" / "page.html").unlink()
    assert "removed: grader/feedback/page.html" in changes(before, tmp_path)
