"""The class tools' one error: a problem the instructor must fix before grading, in French."""

from __future__ import annotations

__all__ = ["GradingError"]


class GradingError(Exception):
    """A problem the instructor must fix before grading, said in one French sentence."""
