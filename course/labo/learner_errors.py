"""The errors a learner meets in the notebook: IPython shows their French lines only.

Each is still an exception of the kind Python would raise (an ``AssertionError`` for a failed
test), so the cell fails and nbgrader gives it 0, but the student reads what to do, not the
frames of this package.
"""

from __future__ import annotations

__all__ = ["EchecDuTest", "MauvaisArgument", "OublierPasEcrite", "PasUneFonction"]


class _Readable(Exception):
    """An error IPython shows as its French lines only (``_render_traceback_``)."""

    def __init__(self, message: str, lines: list[str] | None = None) -> None:
        super().__init__(message)
        self.lines = lines or [message]

    def _render_traceback_(self) -> list[str]:
        return list(self.lines)


class OublierPasEcrite(_Readable, NotImplementedError):
    """oublier still is the stub (its first call raised NotImplementedError)."""


class EchecDuTest(_Readable, AssertionError):
    """A test of the TP failed: the criterion and what is missing, in French."""


class PasUneFonction(_Readable, TypeError):
    """What was passed as oublier is not a function defined in the notebook."""


class MauvaisArgument(_Readable, ValueError):
    """A helper of the course (``indice``, ``noter``…) called with what it cannot take: the
    learner reads which values it takes, not the frames of this package."""
