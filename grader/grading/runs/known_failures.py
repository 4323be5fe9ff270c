"""Submissions whose grading failed lately, not retried at once: one that stops nbgrader or costs
its whole time limit would hold the class on every ``make grade``. ``echecs-autograde.json``
(next to the gradebook; deleting it forgets) keeps each failure's reason, time and fingerprint:
one unchanged that failed less than ``RETRY_AFTER`` s ago is skipped, named, and still fails."""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path

from ..classroom.class_places import FAILURES_FILE, FAILURES_TMP
from ..classroom.paths import files_under
from ..french.french_format import seconds_text

__all__ = ["FILE_NAME", "RETRY_AFTER", "fingerprint", "record", "recent"]

FILE_NAME = FAILURES_FILE
RETRY_AFTER = 60.0  # seconds
_MAX_REASON = 300


def fingerprint(folder: Path) -> str:
    """SHA-256 of the submission's regular files (names and bytes), symbolic links not followed."""
    digest = hashlib.sha256()
    for name, path in files_under(folder, levels=3):  # submitted/<id>/<assignment>
        digest.update(name.encode("utf-8", "surrogateescape") + b"\0")
        try:
            digest.update(path.read_bytes())
        except OSError:
            digest.update(b"<illisible>")
        digest.update(b"\0")
    return digest.hexdigest()


def _load(path: Path, assignment: str) -> tuple[dict, dict]:
    """The record and the assignment's failures; a damaged one counts as none."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        data = {}
    data = data if isinstance(data, dict) else {}
    known = data.get(assignment)
    return data, known if isinstance(known, dict) else {}


def _save(path: Path, data: dict) -> None:
    fd, tmp = tempfile.mkstemp(prefix=FAILURES_TMP, dir=path.parent)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump(data, fh, ensure_ascii=False, indent=1, sort_keys=True)
    os.replace(tmp, path)


def recent(
    path: Path, assignment: str, submitted: Path, students: Iterable[str], now: float | None = None
) -> dict[str, str]:
    """Students whose unchanged submission failed less than ``RETRY_AFTER`` s ago -> why."""
    now = time.time() if now is None else now
    _, known = _load(path, assignment)
    skipped = {}
    for student in students:
        entry = known.get(student)
        at = entry.get("at") if isinstance(entry, dict) else None
        if not isinstance(at, int | float):  # a damaged entry: grade again
            continue
        age, folder = now - at, submitted / student / assignment
        if not 0 <= age < RETRY_AFTER or entry.get("fingerprint") != fingerprint(folder):
            continue
        reason = str(entry.get("reason") or "voir le journal")[:_MAX_REASON]
        skipped[student] = (
            f"non renoté cette fois\u00a0: sa notation a échoué il y a {seconds_text(age, 0)} "
            f"({reason}) et son rendu n'a pas changé depuis. "
            f"Nouvel essai automatique dans {seconds_text(RETRY_AFTER - age, 0)}, ou tout de "
            "suite avec --reessayer (make grade ARGS=--reessayer)."
        )
    return skipped


def record(
    path: Path,
    assignment: str,
    submitted: Path,
    failed: dict[str, str],
    graded: Iterable[str],
    now: float | None = None,
) -> None:
    """Remember this run's failures (`failed`: student -> reason) and forget `graded` ones."""
    now = time.time() if now is None else now
    data, known = _load(path, assignment)
    for student in graded:
        known.pop(student, None)
    for student, reason in failed.items():
        known[student] = {
            "reason": (reason or "")[:_MAX_REASON],
            "at": now,
            "fingerprint": fingerprint(submitted / student / assignment),
        }
    data[assignment] = known
    if not known:
        del data[assignment]
    if data or path.exists():
        _save(path, data)
