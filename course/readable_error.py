"""An error a learner meets in a notebook, shown by IPython as one French line: its class and
its message, without the frames of the course's package (the message says what to do)."""

from __future__ import annotations

__all__ = ["ReadableError"]


class ReadableError(Exception):
    """Mixed in first (``class X(ReadableError, PermissionError)``): X stays the error Python
    would raise, only its display changes."""

    def _render_traceback_(self) -> list[str]:
        """IPython shows this instead of a traceback."""
        return [f"{type(self).__name__}\u00a0: {self}"]
