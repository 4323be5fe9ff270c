"""What ``oublier`` is called with, and what came of it.

A scenario gives each role a concrete input: the learner to erase, a second call for her, a
learner absent from the base, a learner whose id holds an apostrophe, ids made to break SQL built
by string formatting. Its calls run in that order on two fresh copies of its base. ``VISIBLE``,
here, is the example base's: ``verifier`` and the visible tests use it. The hidden tests use
other learners and other inputs, which only the grader has (never this package).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from .fixture import ALICE_PERSONAL_DATA, LearnerSpec
from .protocol import CallOutcome, LoadFailure, PlannedCall, SnapshotFacts, Stalled

__all__ = [
    "VISIBLE",
    "CallResult",
    "Role",
    "RunEnd",
    "Scenario",
    "ScenarioResult",
]


class Role(Enum):
    """What a call is for."""

    ERASE = "erase"  # the learner to forget, on a fresh copy of the base
    AGAIN = "again"  # the same learner again, right after
    UNKNOWN = "unknown"  # a user_id absent from the base, on the same copy
    QUOTED = "quoted"  # a learner whose id holds an apostrophe, on a second fresh copy
    HOSTILE = "hostile"  # ids made to break SQL built by formatting, on that second copy


@dataclass(frozen=True)
class Scenario:
    """Concrete inputs for every role, and the learners added to the example base for them."""

    name: str
    hidden: bool
    learner: str
    personal_data: tuple[str, ...]  # the learner's texts that must not stay readable
    unknown: str
    quoted: str
    hostile: tuple[str, ...]
    extra_learners: tuple[LearnerSpec, ...] = ()

    def calls(self) -> tuple[tuple[Role, PlannedCall], ...]:
        """The calls in the order they run; ``call_id``s are unique across scenarios."""
        first, second = f"{self.name}-1.db", f"{self.name}-2.db"
        planned = [
            (Role.ERASE, first, self.learner),
            (Role.AGAIN, first, self.learner),
            (Role.UNKNOWN, first, self.unknown),
            (Role.QUOTED, second, self.quoted),
        ] + [(Role.HOSTILE, second, user_id) for user_id in self.hostile]
        return tuple(
            (role, PlannedCall(f"{self.name}.{index}.{role.value}", db, user_id))
            for index, (role, db, user_id) in enumerate(planned, start=1)
        )

    def databases(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(call.database for _role, call in self.calls()))


VISIBLE = Scenario(
    name="example",
    hidden=False,
    learner="alice",
    personal_data=ALICE_PERSONAL_DATA,
    unknown="élève-inconnu",
    quoted="o'connor",
    hostile=("x' OR '1'='1",),
)


class RunEnd(Enum):
    """How a runner process ended."""

    FINISHED = "finished"  # every planned call has an outcome
    LOAD_FAILED = "load_failed"  # the cell gave no oublier
    TIMED_OUT = "timed_out"  # stopped at the time limit
    CRASHED = "crashed"  # ended early on its own (exit, signal, memory)


@dataclass(frozen=True)
class CallResult:
    """One call: its input, how it ended (None: it never ended) and the checker's facts."""

    role: Role
    planned: PlannedCall
    outcome: CallOutcome | None
    facts: SnapshotFacts | None


@dataclass(frozen=True)
class ScenarioResult:
    """Everything known about one scenario's run, for the criteria to judge."""

    scenario: Scenario
    end: RunEnd
    timeout: float
    calls: tuple[CallResult, ...]
    load_failure: LoadFailure | None = None
    stalled: Stalled | None = None
    limit: str | None = None  # CRASHED: "memory" or "cpu" (a budget of the whole submission),
    # "protocol" (the runner's journal broke its protocol), "bad_report" (the call's process
    # forged its report), None (the call's process died)

    def of(self, role: Role) -> tuple[CallResult, ...]:
        return tuple(c for c in self.calls if c.role is role)

    def first(self, role: Role) -> CallResult:
        return self.of(role)[0]
