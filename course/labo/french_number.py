"""Numbers as a French reader writes them (``7,5``, ``0,25``): one place for the decimal comma,
used by the learner's messages, the grading record, the feedback pages, the class report and
the lessons' printed measures (``nombre_fr``, the learner's French name for the same thing)."""

from __future__ import annotations

__all__ = ["french_number", "nombre_fr"]


def french_number(value: float, decimals: int | None = None) -> str:
    """`value` with a decimal comma: as ``{:g}`` writes it, or with `decimals` fixed digits."""
    text = f"{value:g}" if decimals is None else f"{value:.{decimals}f}"
    return text.replace(".", ",")


def nombre_fr(valeur: float, decimales: int | None = None) -> str:
    """Le nombre écrit à la française, avec une virgule décimale\u00a0: ``nombre_fr(0.84, 1)``
    donne ``"0,8"``."""
    return french_number(valeur, decimales)
