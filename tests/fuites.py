"""What must never appear in a message a feedback page shows: every hidden input of
``grader/grading/nbgrader_ext/hidden.py`` (learner ids, the ids the hidden calls use, the hidden
learners' texts, personal data and state values, their session ids in the hidden base), a sandbox
uid, and the grader's own paths."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable, Iterable

__all__ = ["hidden_leaks", "hidden_values"]

_SANDBOX_UID = re.compile(r"(?<!\d)19\d{8}(?!\d)")  # course.labo.sandbox.SANDBOX_UIDS


def _strings(value) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _strings(item)


def hidden_values() -> set[str]:
    """Every hidden input, as text (one-character ids such as ``%`` left out: they are not
    data, and any sentence may hold them)."""
    from grading.nbgrader_ext.hidden import HIDDEN

    from course.labo.fixture import fixture_bytes

    values = {HIDDEN.learner, HIDDEN.unknown, HIDDEN.quoted, *HIDDEN.hostile}
    values.update(HIDDEN.personal_data)
    for learner in HIDDEN.extra_learners:
        values.add(learner.user_id)
        for session in learner.sessions:
            for turn in session:
                values.add(turn.text)
                values.update(_strings(turn.state_delta))
    image, _digest = fixture_bytes(HIDDEN.extra_learners)
    conn = sqlite3.connect(":memory:")
    data = bytearray(image)
    data[18:20] = b"\x01\x01"
    conn.deserialize(bytes(data))
    ids = {learner.user_id for learner in HIDDEN.extra_learners}
    values.update(
        sid for sid, uid in conn.execute("SELECT id, user_id FROM sessions") if uid in ids
    )
    conn.close()
    return {v for v in values if len(v) >= 2}


def hidden_leaks(paths: Iterable[str] = (), uids: Iterable[int] = ()) -> Callable[[str], list[str]]:
    """A function that lists what a message leaks: hidden values, a sandbox uid (or one of
    `uids`), a grading folder (``labo-oublier-…``, the sandbox's work folder, or `paths`)."""
    values = sorted(hidden_values())
    folders = ["labo-oublier-", "/labo-work", "snapshot-check-", *paths]
    numbers = [str(uid) for uid in uids]

    def leaks(message: str) -> list[str]:
        found = [v for v in values if v in message]
        found += _SANDBOX_UID.findall(message)
        found += [f for f in folders if f and f in message]
        found += [n for n in numbers if re.search(rf"(?<!\d){n}(?!\d)", message)]
        return found

    return leaks
