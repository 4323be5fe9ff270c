"""The nbgrader options the class tools must understand among those they pass through
(``--student``, ``--force``): the instructor types nbgrader's own flags after ours, and the
tools read the few that change what they do, leaving the rest to nbgrader."""

from __future__ import annotations

from collections.abc import Sequence

from .submitted_ids import matching

__all__ = ["FORCE", "student_pattern", "students_of", "with_force"]

FORCE = "--force"
_STUDENT = ("--student", "--CourseDirectory.student_id")


def student_pattern(args: Sequence[str]) -> str | None:
    """The instructor's nbgrader ``--student`` option (a glob), if any; the last one wins, as
    in nbgrader."""
    pattern = None
    for k, arg in enumerate(args):
        if arg.startswith(tuple(f"{flag}=" for flag in _STUDENT)):
            pattern = arg.split("=", 1)[1]
        elif arg in _STUDENT and k + 1 < len(args):
            pattern = args[k + 1]
    return pattern


def students_of(args: Sequence[str], students: list[str]) -> list[str]:
    """The students an nbgrader ``--student`` option (a glob) leaves, if the instructor gave one;
    compared in Unicode NFC."""
    pattern = student_pattern(args)
    return matching(pattern, students) if pattern else students


def with_force(args: tuple[str, ...], force: bool) -> tuple[bool, tuple[str, ...]]:
    """Whether the run regrades everything (our ``force`` or nbgrader's ``--force``/``-f``),
    and nbgrader's arguments saying so."""
    force = force or FORCE in args or "-f" in args
    if force and FORCE not in args:
        args += (FORCE,)
    return force, args
