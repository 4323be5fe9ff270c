"""The TP's wire protocol: typed records that the grading process, the submission runner and
the snapshot checker pass to each other, as JSON with English keys.

- grading process → runner (stdin): a ``RunPlan``;
- runner → grading process (a pipe, one JSON line per record): ``Ready``, then ``LoadFailure``
  or one ``CallOutcome`` per call, and ``Stalled`` if its time runs out;
- grading process → checker (stdin): a ``CheckRequest``; checker → grading process (stdout):
  one ``SnapshotFacts`` per call.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Literal

__all__ = [
    "CallOutcome",
    "CheckRequest",
    "LoadFailure",
    "PlannedCall",
    "RaisedError",
    "Ready",
    "Reference",
    "RunPlan",
    "SnapshotCheck",
    "SnapshotFacts",
    "Stalled",
    "decode_facts",
    "decode_record",
    "encode_facts",
    "encode_record",
]


@dataclass(frozen=True)
class PlannedCall:
    """One ``await oublier(service, user_id)`` on a database file of the work folder."""

    call_id: str
    database: str
    user_id: str


@dataclass(frozen=True)
class RunPlan:
    """What the runner does, in order; ``deadline`` is the ``time.monotonic()`` (the system's
    monotonic clock, shared by every process) at which the grading process stops it."""

    calls: tuple[PlannedCall, ...]
    deadline: float
    service: Literal["course", "adk"] = "course"  # whose SqliteSessionService oublier gets

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> RunPlan:
        data = json.loads(text)
        service = "adk" if data.get("service") == "adk" else "course"
        return cls(tuple(PlannedCall(**c) for c in data["calls"]), float(data["deadline"]), service)


@dataclass(frozen=True)
class RaisedError:
    """An exception that came out of the student's code: its class name and message."""

    type: str
    message: str


@dataclass(frozen=True)
class Ready:
    """The runner started in its sandbox and is about to load the student's cell: anything
    that goes wrong after this is the submission's doing, not the grader's."""


@dataclass(frozen=True)
class LoadFailure:
    """The cell gave no ``oublier``: it does not parse, raised, or defines no such function."""

    reason: Literal["syntax", "exception", "missing"]
    error: RaisedError | None = None


@dataclass(frozen=True)
class CallOutcome:
    """How one call ended, as the runner saw it (the file is judged by the checker)."""

    call_id: str
    error: RaisedError | None = None
    not_async: bool = False  # oublier returned something that cannot be awaited
    open_transaction: bool = False  # a connection it opened still held an open transaction


@dataclass(frozen=True)
class Stalled:
    """Written just before the deadline by the runner's watchdog: the call still running."""

    call_id: str
    open_transaction: bool


_RECORDS: dict[str, type] = {
    "ready": Ready,
    "load_failure": LoadFailure,
    "call_outcome": CallOutcome,
    "stalled": Stalled,
}
_NAMES = {cls: name for name, cls in _RECORDS.items()}
Record = Ready | LoadFailure | CallOutcome | Stalled


def encode_record(record: Record) -> str:
    """One JSON line (with its newline) for a runner record."""
    return json.dumps({"record": _NAMES[type(record)], **asdict(record)}) + "\n"


def decode_record(line: str) -> Record | None:
    """The record of a JSON line, or None for anything else (a line a submission forged badly)."""
    try:
        data = json.loads(line)
        cls = _RECORDS[data.pop("record")]
        error = data.pop("error", None)
        if error is not None:
            data["error"] = RaisedError(str(error["type"]), str(error["message"]))
        return cls(**data)
    except (ValueError, KeyError, TypeError, AttributeError):
        return None


@dataclass(frozen=True)
class Reference:
    """A database image the checker compares snapshots with (the scenario's fixture)."""

    name: str
    size: int
    sha256: str


@dataclass(frozen=True)
class SnapshotCheck:
    """One snapshot to judge for one learner; ``personal_data`` non-empty asks for a byte scan
    (the learner's session ids in the reference are scanned for too)."""

    call_id: str
    reference: str
    snapshot: str
    user_id: str
    personal_data: tuple[str, ...] = ()


@dataclass(frozen=True)
class CheckRequest:
    """Sent on the checker's stdin: this as one JSON line, then each reference's bytes
    (``size`` of them) in order."""

    references: tuple[Reference, ...]
    checks: tuple[SnapshotCheck, ...]

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> CheckRequest:
        data = json.loads(text)
        return cls(
            tuple(Reference(**r) for r in data["references"]),
            tuple(
                SnapshotCheck(**{**c, "personal_data": tuple(c["personal_data"])})
                for c in data["checks"]
            ),
        )


@dataclass(frozen=True)
class SnapshotFacts:
    """What the checker read in one snapshot (the database and its -wal right after a call)."""

    present: bool
    readable: bool = False
    problem: str | None = None  # French: why it is not a usable database
    sessions_left: int = 0  # the learner's rows left in the tutor's app
    events_left: int = 0
    user_state_left: bool = False
    others_intact: bool = False  # every row that is not the learner's is as in the reference
    personal_data_found: int = 0  # how many of the learner's texts are still in the bytes
    fingerprint: str = ""  # SHA-256 of every row: equal fingerprints, equal contents


def encode_facts(facts: dict[str, SnapshotFacts]) -> str:
    return json.dumps({call_id: asdict(f) for call_id, f in facts.items()})


def decode_facts(text: str) -> dict[str, SnapshotFacts]:
    return {call_id: SnapshotFacts(**f) for call_id, f in json.loads(text).items()}
