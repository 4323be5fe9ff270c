"""What the grading tests share across a run (tests/run_cache.py, tests/read_only.py,
graded_class.py): nothing in the generated course or the graded class holds the path it was
built at, so a copy grades after its original moved and while that original is read-only; the
shared graded class refuses every write, root's and nbgrader's included; a test that changed it
anyway is named and the class put back."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import run_cache
from graded_class import class_in, put_back
from grading_course import (
    generated_course,
    generated_template,
    grading,
    nbgrader,
    register,
    submit,
    tree_digest,
)
from nbgrader.api import Gradebook
from read_only import changes, freeze, snapshot, thaw

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]


def _holding(folder: Path, text: str) -> list[str]:
    """The files under `folder` whose bytes hold `text`."""
    needle = text.encode()
    return [
        str(p.relative_to(folder))
        for p in folder.rglob("*")
        if p.is_file() and needle in p.read_bytes()
    ]


def test_a_copy_grades_after_its_original_moved_and_froze(tmp_path, expected_scores):
    template = generated_template()
    origin = run_cache.origin_of(template.parent)
    assert not origin.exists() and _holding(template, str(origin)) == []
    generated_course(tmp_path / "original" / "cours")
    shutil.copytree(tmp_path / "original", tmp_path / "copie", symlinks=True)
    moved = (tmp_path / "original").rename(tmp_path / "deplace")
    before = snapshot(moved)
    freeze(moved)  # where it can: then a write there fails, else changes() finds it
    try:
        grader = tmp_path / "copie" / "cours" / "grader"
        register(grader, "ana")
        submit(grader, "ana", "complete_vacuum")
        proc = grading(grader, "autograde", "oublier")
        assert proc.returncode == 0, proc.stdout + proc.stderr
    finally:
        thaw(moved)
    assert changes(before, moved) == []
    with Gradebook(f"sqlite:///{grader / 'gradebook.db'}") as gb:
        score = gb.find_submission("oublier", "ana").score
    assert score == float(expected_scores["complete_vacuum"]["score"])
    for gone in (tmp_path / "original", origin, template):
        assert _holding(grader.parent, str(gone)) == [], gone


# Where the class was graded is written only in the record of that grading: nbgrader's logs
# and the lines the tools printed; no file a tool reads back holds it.
RECORDS = {"outputs.json", *(f"cours/grader/rapport/{n}.log" for n in ("autograde", "feedback"))}


def test_the_graded_class_holds_no_path_of_its_build(graded_class, graded_class_master):
    origin = run_cache.origin_of(graded_class_master)
    assert not origin.exists()
    assert set(_holding(graded_class_master, str(origin))) <= RECORDS
    shared = graded_class.grader.parent
    assert tree_digest(shared) == tree_digest(graded_class_master / "cours")
    # (the master's own path prefixes its build's, so the records hold it too: not checked)


def test_writing_into_the_shared_class_fails(graded_class, shared_graded_class):
    if not shared_graded_class.frozen:
        pytest.skip("immutable flag impossible here: only the teardown check guards the class")
    grader = graded_class.grader
    with pytest.raises(OSError):
        (grader / "export.csv").write_text("")
    with pytest.raises(OSError):
        (grader / "gradebook.db").open("ab")
    with pytest.raises(OSError):
        shutil.rmtree(grader / "feedback" / "ana")
    proc = nbgrader(grader, "export", "--to=export.csv")  # what test_backup once did here
    assert proc.returncode != 0 and not (grader / "export.csv").exists()


def test_a_change_is_named_and_put_back(tmp_path):
    """What ``graded_class`` does after a test that wrote into the shared class, on a copy."""
    shared = class_in(tmp_path / "cours")
    before = snapshot(shared.grader.parent)
    assert put_back(shared, before) == []
    (shared.grader / "export.csv").write_text("")
    shutil.rmtree(shared.grader / "feedback" / "ana")
    try:
        changed = put_back(shared, before)
        assert "added: grader/export.csv" in changed
        assert "removed: grader/feedback/ana/oublier/oublier.html" in changed
        assert changes(before, shared.grader.parent) == []  # as it was
    finally:
        thaw(shared.grader.parent)
