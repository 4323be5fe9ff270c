"""Skipping a lesson's later cells with one printed line each, instead of a traceback per cell.

When a lesson cannot go on (its folder is read-only, PostgreSQL is missing), its set-up cell says
why once, then ``skip_cells(should_skip, line)`` registers an IPython input transformer:
every later cell whose source ``should_skip`` accepts is replaced by ``print(line)``. The others
run as written (the quizzes, the score, whatever the lesson keeps). One transformer per line:
a set-up cell run again registers nothing twice, and ``stop_skipping(line)`` removes it.
"""

from __future__ import annotations

from collections.abc import Callable

from course.readable_error import kernel_shell

__all__ = ["skip_cells", "stop_skipping"]


class _Skip:
    """The input transformer: IPython calls it with a cell's lines, before running them."""

    def __init__(self, should_skip: Callable[[str], bool], line: str) -> None:
        self.should_skip, self.line = should_skip, line

    def __call__(self, lines: list[str]) -> list[str]:
        return [f"print({self.line!r})\n"] if self.should_skip("".join(lines)) else lines


def skip_cells(should_skip: Callable[[str], bool], line: str) -> bool:
    """Has every later cell whose source ``should_skip`` accepts print ``line`` instead of
    running; False outside Jupyter (nothing to skip)."""
    shell = kernel_shell()
    if shell is None:
        return False
    stop_skipping(line)
    shell.input_transformers_post.append(_Skip(should_skip, line))
    return True


def stop_skipping(line: str) -> None:
    """The cells ``skip_cells(..., line)`` skipped run again (the cause is fixed)."""
    shell = kernel_shell()
    if shell is None:
        return
    shell.input_transformers_post[:] = [
        t for t in shell.input_transformers_post if not (isinstance(t, _Skip) and t.line == line)
    ]
