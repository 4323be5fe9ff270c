"""Without the sandbox (the student's verifier, or grading in the explicit unsafe mode), a
submission runs with the grader's Unix rights: it may rewrite any fixture file it finds. Neither
its own verdict nor the next submission's may depend on such a file."""

from __future__ import annotations

import tempfile

import pytest
from grading.nbgrader_ext.hidden import HIDDEN

from course.labo.evaluate import evaluate_source
from course.labo.scenario import VISIBLE

# Removes alice from every fixture file under `racine` (the fixture's cache, wherever it is),
# then does `user_states_body` on its own database.
TAMPER = """
import glob
import os
import sqlite3


def _tamper(racine):
    for path in glob.glob(os.path.join(racine, "**", "*.db"), recursive=True):
        if "labo-oublier-" in path:  # the submission's own working copies
            continue
        try:
            os.chmod(path, 0o644)
            conn = sqlite3.connect(path)
            conn.execute("PRAGMA foreign_keys = ON")
            conn.execute("DELETE FROM sessions WHERE app_name = 'tuteur' AND user_id = 'alice'")
            conn.execute("DELETE FROM user_states")
            conn.commit()
            conn.execute("VACUUM")
            conn.close()
        except Exception:
            pass


async def oublier(service, user_id: str) -> None:
    _tamper(RACINE)
    for s in (await service.list_sessions(app_name=APP_NAME, user_id=user_id)).sessions:
        await service.delete_session(app_name=APP_NAME, user_id=user_id, session_id=s.id)
    conn = sqlite3.connect(service.db_path)
    conn.execute("DELETE FROM user_states")
    conn.commit()
    conn.close()
"""


@pytest.fixture
def private_tmp(tmp_path, monkeypatch):
    """This test's own temporary folder for the grader and its subprocesses (the machine's
    shared fixture cache, if any, is never touched)."""
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    return tmp_path


def _unsafe(source: str):
    return evaluate_source(source, scenarios=(VISIBLE, HIDDEN), sandboxed=False)


@pytest.mark.slow
def test_tampered_fixture_changes_no_verdict(private_tmp, sample_answers, expected_scores):
    source = f"RACINE = {str(private_tmp)!r}\n" + TAMPER
    # Without the tampering this is `user_states_sans_where`: "autres" lost twice.
    tampered = _unsafe(source)
    assert not tampered.verdicts["autres"].ok and not tampered.verdicts["autres_cache"].ok
    assert tampered.score == expected_scores["user_states_sans_where"]["score"]
    # The next submissions are judged on the real fixture, not on the tampered one.
    assert _unsafe(sample_answers["triche"]).score == 0
    assert _unsafe(sample_answers["graine"]).score == expected_scores["graine"]["score"]


def test_checker_refuses_a_reference_that_is_not_the_grader_s(tmp_path):
    import subprocess
    import sys

    from course.labo.fixture import fixture_bytes
    from course.labo.protocol import CheckRequest, Reference

    data, digest = fixture_bytes()
    altered = data[:-1] + bytes([data[-1] ^ 1])
    request = CheckRequest((Reference("example", len(altered), digest),), ())
    proc = subprocess.run(
        [sys.executable, "-I", "-m", "course.labo.snapshot_checker"],
        input=request.to_json().encode() + b"\n" + altered,
        capture_output=True,
        timeout=60,
    )
    assert proc.returncode != 0 and b"SHA-256" in proc.stderr
    intact = CheckRequest((Reference("example", len(data), digest),), ())
    proc = subprocess.run(
        [sys.executable, "-I", "-m", "course.labo.snapshot_checker"],
        input=intact.to_json().encode() + b"\n" + data,
        capture_output=True,
        timeout=60,
    )
    assert proc.returncode == 0 and proc.stdout == b"{}"
