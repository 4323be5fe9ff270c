"""Numbers as a French reader writes them (``7,5``, ``0,25``): one place for the decimal comma,
used by the learner's messages, the grading record, the feedback pages and the class report."""

from __future__ import annotations

__all__ = ["french_number"]


def french_number(value: float, decimals: int | None = None) -> str:
    """`value` with a decimal comma: as ``{:g}`` writes it, or with `decimals` fixed digits."""
    text = f"{value:g}" if decimals is None else f"{value:.{decimals}f}"
    return text.replace(".", ",")
