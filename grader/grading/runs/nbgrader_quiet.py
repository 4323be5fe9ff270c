"""The command line of a class tool that runs one quiet nbgrader command (``run_quiet``, its
English log in ``rapport/<name>.log``): its French summary, on stderr when it failed."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from ..french.french_args import FrenchParser
from ..french.system_reason import french_message

__all__ = ["assignment_command", "finish"]


def finish(parser: argparse.ArgumentParser, run: Callable[[], tuple[int, list[str]]]) -> int:
    """Run a class command, print its French summary (on stderr if it failed), return its
    status; a missing course folder is one French line, status 2."""
    try:
        status, lines = run()
    except FileNotFoundError as exc:  # no course there: one French sentence, no traceback
        print(f"✘ {parser.prog}\u00a0: {french_message(exc)}", file=sys.stderr)
        return 2
    print("\n".join(lines), file=sys.stderr if status else sys.stdout)
    return status


def assignment_command(
    argv: list[str] | None,
    prog: str,
    description: str,
    command: Callable[[str, list[str], Path | None], tuple[int, list[str]]],
) -> int:
    """The command line of a class command run on one assignment: its French parser, every
    option it does not know passed to nbgrader, its summary printed by :func:`finish`."""
    parser = FrenchParser(prog=prog, description=description)
    parser.add_argument("assignment", metavar="DEVOIR", help="le devoir, par exemple oublier")
    parser.add_grader_dir()
    args, extra = parser.parse_known_args(argv)
    return finish(parser, lambda: command(args.assignment, extra, args.grader_dir))
