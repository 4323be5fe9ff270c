"""When PostgreSQL is missing, a lesson's remaining cells are skipped, not failed one by one.

``passer_sans_postgres(raison)`` prints the one French sentence that says what to install, and
registers an IPython input transformer that empties every later cell except the quizzes and the
score summary (they need no server): a learner sees one clear message instead of a traceback
per cell, and the lesson still ends with its score.
"""

from __future__ import annotations

__all__ = ["passer_sans_postgres", "SKIPPED"]

SKIPPED = "# cellule passée\u00a0: la base partagée est indisponible\n"
_KEEP = ("Quiz(", "bilan(")


def _skip(lines: list[str]) -> list[str]:
    source = "".join(lines)
    if any(marker in source for marker in _KEEP):
        return lines
    return [SKIPPED]


def passer_sans_postgres(raison: object) -> None:
    """Dit pourquoi PostgreSQL manque, puis fait passer les cellules suivantes qui en ont besoin
    (toutes, sauf les quiz et le bilan)."""
    phrase = str(raison).strip().rstrip(".")
    print(f"{phrase}\u00a0; les cellules suivantes sont passées, sauf les quiz et le bilan.")
    try:
        from IPython import get_ipython
    except ImportError:
        return
    shell = get_ipython()
    if shell is not None and _skip not in shell.input_transformers_post:
        shell.input_transformers_post.append(_skip)
