"""The TP's wire protocol: typed records that the grading process, the submission runner and
the snapshot checker pass to each other, with English keys.

- grading process → runner (stdin): a ``RunPlan`` as one JSON line, then the cell's text and
  the database images, as many bytes as the plan says;
- runner → grading process (a pipe): length-prefixed frames (``encode_frame``), written only by
  the runner's supervisor, which never runs student code: ``Ready``, then per scenario either a
  ``LoadFailure`` or one ``CallOutcome`` per call (its payload: the database file, its ``-wal``
  and its ``-shm`` right after the call), and ``Stalled``, ``Crashed`` or ``LimitExceeded``
  when a call ends otherwise. ``JournalReader`` checks each frame against the plan: a frame
  that does not parse, comes out of order, repeats a call or claims a size it does not have is
  a protocol violation, never a record (see ``course.labo.evaluate``);
- grading process → checker (stdin): a ``CheckRequest``; checker → grading process (stdout):
  one ``SnapshotFacts`` per call.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Literal

__all__ = [
    "MAX_ERROR_MESSAGE",
    "MAX_ERROR_TYPE",
    "MAX_SNAPSHOT_BYTES",
    "CallOutcome",
    "CheckRequest",
    "Crashed",
    "FileState",
    "ImageSpec",
    "JournalReader",
    "LimitExceeded",
    "LoadFailure",
    "PlannedCall",
    "ProtocolViolation",
    "RaisedError",
    "Ready",
    "Reference",
    "RunPlan",
    "ScenarioPlan",
    "SnapshotCheck",
    "SnapshotFacts",
    "Stalled",
    "decode_facts",
    "encode_facts",
    "encode_frame",
]

# A base of a few hundred kilobytes cannot legitimately grow past this.
MAX_SNAPSHOT_BYTES = 32 << 20
MAX_ERROR_TYPE = 100
MAX_ERROR_MESSAGE = 500
_MAX_HEADER = 16 << 10
_PREFIX = 18  # "%08x %08x\n"


@dataclass(frozen=True)
class PlannedCall:
    """One ``await oublier(service, user_id)`` on a database file of the work folder."""

    call_id: str
    database: str
    user_id: str


@dataclass(frozen=True)
class ImageSpec:
    """A database file the runner writes in its work folder before a scenario's first call."""

    name: str
    size: int


@dataclass(frozen=True)
class ScenarioPlan:
    """One scenario's calls, in order, and the files they start from."""

    name: str
    calls: tuple[PlannedCall, ...]
    images: tuple[ImageSpec, ...]


@dataclass(frozen=True)
class RunPlan:
    """What the runner does, in order. ``deadline`` is the ``time.monotonic()`` (the system's
    monotonic clock, shared by every process) at which the whole submission stops; the budgets
    count every process the submission starts, together."""

    scenarios: tuple[ScenarioPlan, ...]
    source_size: int
    deadline: float
    memory_bytes: int  # resident memory of all the submission's processes together
    cpu_seconds: float  # CPU time of all of them together
    sandboxed: bool = True
    service: Literal["course", "adk"] = "course"  # whose SqliteSessionService oublier gets

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> RunPlan:
        data = json.loads(text)
        scenarios = tuple(
            ScenarioPlan(
                s["name"],
                tuple(PlannedCall(**c) for c in s["calls"]),
                tuple(ImageSpec(**i) for i in s["images"]),
            )
            for s in data.pop("scenarios")
        )
        return cls(scenarios=scenarios, **data)


@dataclass(frozen=True)
class RaisedError:
    """An exception that came out of the student's code: its class name and message, both
    chosen by the student's code (bounded here, never shown for a hidden scenario)."""

    type: str
    message: str


@dataclass(frozen=True)
class Ready:
    """The runner's supervisor started in its sandbox: anything that goes wrong after this is
    the submission's doing, not the grader's."""


@dataclass(frozen=True)
class LoadFailure:
    """The cell gave no ``oublier``: it does not parse, raised, or defines no such function."""

    reason: Literal["syntax", "exception", "missing"]
    error: RaisedError | None = None


@dataclass(frozen=True)
class FileState:
    """A database file as the supervisor found it after the call (every process stopped)."""

    state: Literal["ok", "missing", "unreadable", "too_big"]
    size: int = 0  # bytes sent as payload when ok; the file's size when too_big


@dataclass(frozen=True)
class CallOutcome:
    """How one call ended, as the supervisor saw it (the files are judged by the checker)."""

    call_id: str
    error: RaisedError | None = None
    # oublier is not an async def: decided by the grading process from the cell's syntax tree,
    # never by the runner (the call's process could say anything)
    not_async: bool = False
    open_transaction: bool = False  # a hint from the call's process: wording only
    # a connection of the student's closed or freed with a transaction never validated, which
    # rolled it back (a hint from the call's process): wording only
    rolled_back: bool = False
    # a connection of the student's never closed (still open after the call, or freed without
    # close()): a hint from the call's process, wording only
    unclosed: bool = False
    # a coroutine of the call never awaited (a hint from the call's process): wording only
    unawaited: bool = False
    # a connection of the student's in autocommit=False (Python 3.12+), which begins a new
    # transaction at each commit (a hint from the call's process): wording only
    autocommit_off: bool = False
    # no connection of the student's deleted or changed a row, kept or rolled back (a hint from
    # the call's process): an error then stopped the call before any DELETE of theirs ran;
    # wording only
    nothing_deleted: bool = False
    # the service was closed (the call's process says so), or its -wal is gone after the call
    # (the supervisor sees it: submission_runner._wal_gone): only lowers
    service_closed: bool = False
    stray_files: int = 0  # files left in the work folder or /tmp besides the base, -wal, -shm
    database: FileState = field(default_factory=lambda: FileState("missing"))
    wal: FileState = field(default_factory=lambda: FileState("missing"))
    shm: FileState = field(default_factory=lambda: FileState("missing"))

    @property
    def files(self) -> tuple[tuple[str, FileState], ...]:
        """(suffix of the file's name, its state), in the payload's order."""
        return (("", self.database), ("-wal", self.wal), ("-shm", self.shm))


@dataclass(frozen=True)
class Stalled:
    """The call still running at the deadline, and the call's own hint: did a connection of
    the student's hold a transaction (the usual reason for waiting: its own lock)."""

    call_id: str
    open_transaction: bool


@dataclass(frozen=True)
class Crashed:
    """The call's process ended without a valid report: it died (exit, signal) or wrote on its
    report pipe what no call writes (a forged or repeated report). Its scenario stops."""

    call_id: str
    reason: Literal["died", "bad_report"] = "died"


@dataclass(frozen=True)
class LimitExceeded:
    """The submission's processes together went past a budget: everything stopped."""

    call_id: str
    kind: Literal["memory", "cpu"]


_RECORDS: dict[str, type] = {
    "ready": Ready,
    "load_failure": LoadFailure,
    "call_outcome": CallOutcome,
    "stalled": Stalled,
    "crashed": Crashed,
    "limit": LimitExceeded,
}
_NAMES = {cls: name for name, cls in _RECORDS.items()}
Record = Ready | LoadFailure | CallOutcome | Stalled | Crashed | LimitExceeded


def encode_frame(record: Record, payload: bytes = b"") -> bytes:
    """One frame: ``%08x %08x\\n`` (header and payload lengths), the JSON header, the payload."""
    header = json.dumps({"record": _NAMES[type(record)], **asdict(record)}).encode()
    return b"%08x %08x\n" % (len(header), len(payload)) + header + payload


class ProtocolViolation(Exception):
    """A frame the plan does not allow: the run's records stop being trusted there."""


def _error(data) -> RaisedError | None:
    if data is None:
        return None
    kind, message = data["type"], data["message"]
    if not isinstance(kind, str) or not isinstance(message, str):
        raise TypeError("error")
    return RaisedError(kind[:MAX_ERROR_TYPE], message[:MAX_ERROR_MESSAGE])


def _file(data) -> FileState:
    state, size = data["state"], data["size"]
    if state not in ("ok", "missing", "unreadable", "too_big") or type(size) is not int:
        raise TypeError("file")
    if size < 0 or (state == "ok" and size > MAX_SNAPSHOT_BYTES):
        raise ValueError("size")
    return FileState(state, size)


def _decode(header: bytes) -> Record:
    data = json.loads(header)
    cls = _RECORDS[data.pop("record")]
    if "error" in data:
        data["error"] = _error(data["error"])
    for key in ("database", "wal", "shm"):
        if key in data:
            data[key] = _file(data[key])
    record = cls(**data)
    for name, value in asdict(record).items():
        expected = {
            "call_id": str,
            "not_async": bool,
            "open_transaction": bool,
            "rolled_back": bool,
            "unclosed": bool,
            "service_closed": bool,
            "unawaited": bool,
            "autocommit_off": bool,
            "nothing_deleted": bool,
        }.get(name)
        if expected is not None and type(value) is not expected:
            raise TypeError(name)
    if isinstance(record, CallOutcome) and type(record.stray_files) is not int:
        raise TypeError("stray_files")
    if isinstance(record, LoadFailure) and record.reason not in ("syntax", "exception", "missing"):
        raise ValueError("reason")
    if isinstance(record, Crashed) and record.reason not in ("died", "bad_report"):
        raise ValueError("reason")
    if isinstance(record, LimitExceeded) and record.kind not in ("memory", "cpu"):
        raise ValueError("kind")
    return record


class JournalReader:
    """Reads the runner's frames and checks them against the plan, in order.

    Allowed: ``Ready``; then, scenario after scenario, a ``LoadFailure`` (which ends that
    scenario) or the ``CallOutcome`` of each planned call in order, where a ``Crashed`` ends the
    scenario; a ``Stalled`` or ``LimitExceeded`` for the call expected next ends the run. Every
    other frame (unknown, malformed, repeated, out of order, after the end, payload of another
    size than its header says) raises ``ProtocolViolation`` and nothing after it is read.
    """

    def __init__(self, plan: RunPlan) -> None:
        self._plan = plan
        self._buffer = b""
        self._scenario = -1  # -1: waiting for Ready
        self._call = 0
        self.ended = False
        self.records: list[tuple[str | None, Record, bytes]] = []  # scenario name, record, payload

    def _expected(self) -> PlannedCall | None:
        if self._scenario < 0 or self._scenario >= len(self._plan.scenarios):
            return None
        calls = self._plan.scenarios[self._scenario].calls
        return calls[self._call] if self._call < len(calls) else None

    def _next_scenario(self) -> None:
        self._scenario += 1
        self._call = 0
        if self._scenario >= len(self._plan.scenarios):
            self.ended = True

    def _accept(self, record: Record, payload: bytes) -> None:
        if self.ended:
            raise ProtocolViolation("frame after the end")
        if self._scenario < 0:
            if not isinstance(record, Ready) or payload:
                raise ProtocolViolation("Ready expected first")
            self.records.append((None, record, payload))
            self._next_scenario()
            return
        name = self._plan.scenarios[self._scenario].name
        call = self._expected()
        if isinstance(record, LoadFailure):
            if self._call != 0 or payload:
                raise ProtocolViolation("load failure after a call")
            self.records.append((name, record, payload))
            self._next_scenario()
            return
        if isinstance(record, Ready) or call is None or record.call_id != call.call_id:
            raise ProtocolViolation("record for another call than the next planned one")
        if isinstance(record, CallOutcome):
            sizes = sum(f.size for _suffix, f in record.files if f.state == "ok")
            if sizes != len(payload):
                raise ProtocolViolation("payload of another size")
            self.records.append((name, record, payload))
            self._call += 1
            if self._call == len(self._plan.scenarios[self._scenario].calls):
                self._next_scenario()
            return
        if payload:
            raise ProtocolViolation("payload on a record that has none")
        self.records.append((name, record, payload))
        if isinstance(record, Crashed):
            self._next_scenario()
        else:  # Stalled, LimitExceeded: the whole run stops
            self.ended = True

    def feed(self, data: bytes) -> None:
        """Add bytes read from the pipe; raises ProtocolViolation on the first bad frame."""
        self._buffer += data
        while len(self._buffer) >= _PREFIX:
            prefix = self._buffer[:_PREFIX]
            try:
                if prefix[8:9] != b" " or prefix[17:18] != b"\n":
                    raise ValueError(prefix)
                header_size, payload_size = int(prefix[:8], 16), int(prefix[9:17], 16)
            except ValueError as exc:
                raise ProtocolViolation("bad frame prefix") from exc
            if header_size > _MAX_HEADER or payload_size > 3 * MAX_SNAPSHOT_BYTES:
                raise ProtocolViolation("frame too large")
            end = _PREFIX + header_size + payload_size
            if len(self._buffer) < end:
                return
            header = self._buffer[_PREFIX : _PREFIX + header_size]
            payload = self._buffer[_PREFIX + header_size : end]
            self._buffer = self._buffer[end:]
            try:
                record = _decode(header)
            except (ValueError, KeyError, TypeError, AttributeError) as exc:
                raise ProtocolViolation("bad frame header") from exc
            self._accept(record, payload)

    @property
    def incomplete(self) -> bool:
        """Bytes left that do not make a whole frame (the writer died mid-frame)."""
        return bool(self._buffer)


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
    extra_objects: int = 0  # tables, views, triggers, indexes the reference does not have
    fingerprint: str = ""  # SHA-256 of every row: equal fingerprints, equal contents


def encode_facts(facts: dict[str, SnapshotFacts]) -> str:
    return json.dumps({call_id: asdict(f) for call_id, f in facts.items()})


def decode_facts(text: str) -> dict[str, SnapshotFacts]:
    return {call_id: SnapshotFacts(**f) for call_id, f in json.loads(text).items()}
