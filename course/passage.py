"""Skipping a lesson's later cells with one printed line each, instead of a traceback per cell.

When a lesson cannot go on (its folder is read-only, PostgreSQL is missing), its set-up cell says
why once, then ``passer_les_cellules(a_passer, ligne)`` registers an IPython input transformer:
every later cell whose source ``a_passer`` accepts is replaced by ``print(ligne)``. The others
run as written (the quizzes, the score, whatever the lesson keeps). One transformer per line:
a set-up cell run again registers nothing twice, and ``ne_plus_passer(ligne)`` removes it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["ne_plus_passer", "passer_les_cellules"]


class _Skip:
    """The input transformer: IPython calls it with a cell's lines, before running them."""

    def __init__(self, a_passer: Callable[[str], bool], ligne: str) -> None:
        self.a_passer, self.ligne = a_passer, ligne

    def __call__(self, lines: list[str]) -> list[str]:
        return [f"print({self.ligne!r})\n"] if self.a_passer("".join(lines)) else lines


def _shell() -> Any:
    try:
        from IPython import get_ipython
    except ImportError:
        return None
    return get_ipython()


def passer_les_cellules(a_passer: Callable[[str], bool], ligne: str) -> bool:
    """Fait passer les cellules suivantes dont ``a_passer(source)`` est vrai\u00a0: chacune affiche
    ``ligne`` au lieu de s'exécuter. False hors de Jupyter (rien à passer)."""
    shell = _shell()
    if shell is None:
        return False
    ne_plus_passer(ligne)
    shell.input_transformers_post.append(_Skip(a_passer, ligne))
    return True


def ne_plus_passer(ligne: str) -> None:
    """Les cellules que ``passer_les_cellules(..., ligne)`` faisait passer s'exécutent de
    nouveau (la cause est réglée)."""
    shell = _shell()
    if shell is None:
        return
    shell.input_transformers_post[:] = [
        t for t in shell.input_transformers_post if not (isinstance(t, _Skip) and t.ligne == ligne)
    ]
