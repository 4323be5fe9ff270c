"""The verdict comes from a process that runs no student code: the runner's journal is checked
frame by frame against the plan, the supervisor cannot be reached from the calls it forks
(signals, /proc, ptrace), async-ness is read from the syntax tree, and a checker that fails
gives a 0 with a reason, never an error of the grader."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from grading.nbgrader_ext.hidden import HIDDEN
from helpers import tp_points

from course.labo.evaluate import _analyse, _check, evaluate_source
from course.labo.fixture import fixture_bytes
from course.labo.protocol import (
    CallOutcome,
    Crashed,
    FileState,
    JournalReader,
    PlannedCall,
    ProtocolViolation,
    Ready,
    RunPlan,
    ScenarioPlan,
    SnapshotCheck,
    Stalled,
    encode_frame,
)
from course.labo.sandbox import Sandbox
from course.labo.scenario import VISIBLE

# every automatic test of the TP passed: the criteria table's points (helpers.tp_points)
FULL = tp_points()[0]

pytestmark = pytest.mark.timeout(300)


def _plan() -> RunPlan:
    calls = tuple(PlannedCall(f"s.{n}", "s-1.db", "alice") for n in (1, 2))
    hidden = (PlannedCall("h.1", "h-1.db", "x"),)
    return RunPlan((ScenarioPlan("s", calls, ()), ScenarioPlan("h", hidden, ())), 0, 0.0, 1, 1.0)


def _outcome(call_id: str, payload: bytes = b"") -> bytes:
    state = FileState("ok", len(payload)) if payload else FileState("missing")
    return encode_frame(CallOutcome(call_id, database=state), payload)


def test_the_journal_accepts_exactly_the_planned_sequence():
    reader = JournalReader(_plan())
    data = encode_frame(Ready()) + _outcome("s.1", b"abc") + _outcome("s.2") + _outcome("h.1")
    for byte in range(0, len(data), 7):  # any split of the pipe's reads
        reader.feed(data[byte : byte + 7])
    assert reader.ended and not reader.incomplete
    assert [r.call_id for _n, r, _p in reader.records[1:]] == ["s.1", "s.2", "h.1"]
    assert reader.records[1][2] == b"abc"


@pytest.mark.parametrize(
    "frames",
    [
        [_outcome("s.1")],  # no Ready first
        [encode_frame(Ready()), _outcome("s.1"), _outcome("s.1")],  # repeated
        [encode_frame(Ready()), _outcome("s.2")],  # out of order
        [encode_frame(Ready()), _outcome("h.1")],  # another scenario's call
        [encode_frame(Ready()), _outcome("s.1"), _outcome("s.2"), _outcome("h.1"), _outcome("h.1")],
        [encode_frame(Ready()), encode_frame(Ready())],
        [encode_frame(Ready()), encode_frame(Stalled("s.1", False)), _outcome("s.1")],  # after end
        [encode_frame(Ready()), b"00000010 00000000\n" + b'{"record": "x"}!'],  # unknown
        [encode_frame(Ready()), b"not a frame at all\n"],
        # a header that claims a smaller payload than the one it carries
        [encode_frame(Ready()), encode_frame(CallOutcome("s.1", database=FileState("ok", 2)))],
    ],
    ids=[
        "sans-ready",
        "repete",
        "desordre",
        "autre-scenario",
        "apres-la-fin",
        "deux-ready",
        "apres-arret",
        "inconnu",
        "pas-une-trame",
        "taille",
    ],
)
def test_the_journal_refuses_any_other_frame(frames):
    reader = JournalReader(_plan())
    with pytest.raises(ProtocolViolation):
        for frame in frames:
            reader.feed(frame)


def test_a_crash_ends_its_scenario_only():
    reader = JournalReader(_plan())
    reader.feed(encode_frame(Ready()) + encode_frame(Crashed("s.1")) + _outcome("h.1"))
    assert reader.ended


def test_async_ness_comes_from_the_syntax_tree():
    assert _analyse("async def oublier(s, u):\n    pass\n")[1:] == (None, True)
    assert _analyse("def oublier(s, u):\n    pass\n")[1:] == (None, False)
    # a def returning a coroutine, or a name bound to one, is not an async def
    assert _analyse("async def _v(s, u):\n    pass\noublier = _v\n")[2] is False
    assert _analyse("x = 1\n")[1].reason == "missing"
    deep = _analyse("x = " + "-" * 3000 + "1\nasync def oublier(s, u):\n    pass\n")[1]
    assert deep.reason == "syntax" and "trop imbriquée" in deep.error.message
    assert _analyse("x = 1\n" * 30_000)[1].reason == "syntax"


HOSTILE_TO_THE_SUPERVISOR = """
import ctypes, os, signal

def _attaques():
    reussies = []
    try:
        os.kill(1, signal.SIGINT)  # Python's default handler would stop the supervisor
        os.kill(1, signal.SIGTERM)
    except OSError:
        pass
    for chemin in ("/proc/1/mem", "/proc/1/fd", "/proc/1/environ"):
        try:
            if chemin.endswith("fd"):
                os.listdir(chemin)
            else:
                open(chemin, "rb").read(1)
            reussies.append(chemin)
        except OSError:
            pass
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.ptrace(16, 1, 0, 0) == 0:  # PTRACE_ATTACH
        reussies.append("ptrace")
    return reussies

async def oublier(service, user_id: str) -> None:
    if _attaques():
        return
    for s in (await service.list_sessions(app_name=APP_NAME, user_id=user_id)).sessions:
        await service.delete_session(app_name=APP_NAME, user_id=user_id, session_id=s.id)
    conn = sqlite3.connect(service.db_path)
    try:
        conn.execute("PRAGMA foreign_keys = ON")
        with conn:
            for table in ("events", "sessions", "user_states"):
                conn.execute(f"DELETE FROM {table} WHERE app_name = ? AND user_id = ?",
                             (APP_NAME, user_id))
        conn.execute("VACUUM")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()
"""


def test_the_calls_cannot_reach_their_supervisor():
    """Signals to the namespace's PID 1, its /proc entries and ptrace are all refused: the
    answer erases only if every attack failed, and the supervisor survives to record 10/10."""
    evaluation = evaluate_source(
        HOSTILE_TO_THE_SUPERVISOR, scenarios=(VISIBLE, HIDDEN), sandboxed=True
    )
    assert evaluation.outcome()[0] == "graded"
    assert evaluation.score == FULL


def _snapshot(folder: Path, name: str, image: bytes) -> SnapshotCheck:
    path = folder / f"{name}.db"
    path.write_bytes(image)
    return SnapshotCheck(name, "example", str(path), "alice")


def test_an_unreadable_snapshot_is_a_zero_with_a_reason(tmp_path):
    """chmod 000 on a snapshot: the sandboxed checker (never root) cannot read it; that call
    gets a problem, the others are judged."""
    images = {"example": fixture_bytes()}
    folder = tmp_path / "instantanes"
    folder.mkdir()
    fine = _snapshot(folder, "bon", images["example"][0])
    locked = _snapshot(folder, "ferme", images["example"][0])
    Path(locked.snapshot).chmod(0)
    facts = _check((fine, locked), folder, images, Sandbox())
    assert facts["bon"].readable and facts["bon"].others_intact
    assert not facts["ferme"].readable and "illisible" in facts["ferme"].problem


def test_a_failing_checker_gives_zeros_with_a_reason(tmp_path):
    """A reference the checker refuses (its SHA-256 differs) stops the checker: every call is
    unreadable with the reason, and no exception reaches nbgrader."""
    data, digest = fixture_bytes()
    images = {"example": (data[:-1] + bytes([data[-1] ^ 1]), digest)}
    folder = tmp_path / "instantanes"
    folder.mkdir()
    check = _snapshot(folder, "c", data)
    facts = _check((check,), folder, images, None)
    assert not facts["c"].readable
    assert facts["c"].problem.startswith("le contrôle de la base n'a pas pu la lire")


def test_the_checker_counts_objects_the_reference_lacks(tmp_path):
    data, _digest = fixture_bytes()
    folder = tmp_path / "instantanes"
    folder.mkdir()
    check = _snapshot(folder, "c", data)
    conn = sqlite3.connect(check.snapshot)
    conn.execute("PRAGMA journal_mode = DELETE")
    conn.execute("CREATE TABLE copie (x)")
    conn.execute("CREATE VIEW vue AS SELECT 1")
    conn.execute("CREATE TRIGGER t AFTER INSERT ON copie BEGIN SELECT 1; END")
    conn.close()
    facts = _check((check,), folder, {"example": fixture_bytes()}, None)
    assert facts["c"].readable and facts["c"].extra_objects == 3
