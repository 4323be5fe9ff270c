"""The class tools' errors in French: their own (`GradingError`), and why a system call failed
(`course.system_reason`, shared with the lessons)."""

from __future__ import annotations

from course.system_reason import french_message, french_reason

__all__ = ["GradingError", "french_message", "french_reason"]


class GradingError(Exception):
    """A problem the instructor must fix before grading, said in one French sentence."""
