"""The record of failed submissions (grading.runs.known_failures): skipped for a minute when
unchanged, retried at once when changed, forgotten once graded; a broken record file is ignored."""

from __future__ import annotations

import json

from grading.runs.known_failures import RETRY_AFTER, fingerprint, recent, record


def _submission(submitted, student, text="{}"):
    folder = submitted / student / "oublier"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "oublier.ipynb").write_text(text)
    return folder


def test_a_recent_unchanged_failure_is_skipped_with_a_french_reason(tmp_path):
    submitted, path = tmp_path / "submitted", tmp_path / "echecs.json"
    _submission(submitted, "ben")
    _submission(submitted, "ana")
    record(path, "oublier", submitted, {"ben": "NotJSONError"}, ["ana"], now=1000.0)
    skipped = recent(path, "oublier", submitted, ["ana", "ben"], now=1010.0)
    assert list(skipped) == ["ben"]
    assert "il y a 10\u00a0s (NotJSONError)" in skipped["ben"]
    assert "dans 50\u00a0s" in skipped["ben"] and "--reessayer" in skipped["ben"]
    assert recent(path, "oublier", submitted, ["ben"], now=1000.0 + RETRY_AFTER) == {}
    assert recent(path, "autre", submitted, ["ben"], now=1010.0) == {}


def test_a_changed_submission_is_retried_and_a_graded_one_forgotten(tmp_path):
    submitted, path = tmp_path / "submitted", tmp_path / "echecs.json"
    folder = _submission(submitted, "ben")
    before = fingerprint(folder)
    record(path, "oublier", submitted, {"ben": "x"}, [], now=1000.0)
    (folder / "timestamp.txt").write_text("2025-03-14 18:00:00")
    assert fingerprint(folder) != before
    assert recent(path, "oublier", submitted, ["ben"], now=1001.0) == {}
    record(path, "oublier", submitted, {}, ["ben"], now=1002.0)
    assert path.read_text() == "{}"


def test_an_unreadable_record_is_ignored(tmp_path):
    submitted, path = tmp_path / "submitted", tmp_path / "echecs.json"
    _submission(submitted, "ben")
    path.write_text("{pas du json")
    assert recent(path, "oublier", submitted, ["ben"]) == {}
    record(path, "oublier", submitted, {"ben": "x"}, [])
    assert "ben" in recent(path, "oublier", submitted, ["ben"])


def test_a_damaged_record_is_graded_again_not_a_crash(tmp_path):
    """Objects of the wrong kind in a record that is valid JSON: each entry concerned is
    ignored (the submission is graded again), the rest of the record still counts."""
    submitted, path = tmp_path / "submitted", tmp_path / "echecs.json"
    _submission(submitted, "ben")
    _submission(submitted, "ana")
    record(path, "oublier", submitted, {"ben": "x", "ana": "y"}, [], now=1000.0)
    good = json.loads(path.read_text())
    good["oublier"]["ana"]["at"] = "hier"
    good["oublier"]["ben"]["reason"] = ["pas", "une", "phrase"]
    path.write_text(json.dumps(good))
    skipped = recent(path, "oublier", submitted, ["ana", "ben"], now=1010.0)
    assert list(skipped) == ["ben"] and "['pas', 'une', 'phrase']" in skipped["ben"]
    path.write_text(json.dumps({"oublier": ["ben"]}))
    assert recent(path, "oublier", submitted, ["ben"], now=1010.0) == {}
    record(path, "oublier", submitted, {"ben": "x"}, [], now=1020.0)
    assert list(recent(path, "oublier", submitted, ["ben"], now=1030.0)) == ["ben"]
