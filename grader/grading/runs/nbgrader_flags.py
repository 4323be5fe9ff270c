"""The nbgrader options the tools pass through but must understand (``--student``, ``--force``)."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["student_pattern", "with_force"]

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


def with_force(args: tuple[str, ...], force: bool) -> tuple[bool, tuple[str, ...]]:
    """Whether the run regrades everything (our ``force`` or nbgrader's ``--force``/``-f``),
    and nbgrader's arguments saying so."""
    force = force or FORCE in args or "-f" in args
    if force and FORCE not in args:
        args += (FORCE,)
    return force, args
