"""When PostgreSQL is missing, the cells that need the server are skipped, not failed one by one.

A lesson marks each cell that needs the server with a first comment line, ``MARKER``: the
learner sees which cells those are even when the server runs. ``passer_sans_postgres(raison)``
prints one French message (why the server is missing, what to install, which cells are skipped)
and has each later marked cell print one line saying it was skipped instead
(``course.skipping``), until ``serveur_disponible()``: the set-up cell run again once PostgreSQL
is found (installed, or given in ``COURS_PG_BIN``, in the same kernel). Every other cell runs:
the part of the lesson that needs no server (lesson 7's section 1, one SQLite file per
instance), the quizzes, the score summary and the learner's own cells (``indice(...)``, a
``print``), which a blanket skip used to swallow.
"""

from __future__ import annotations

from course.readable_error import ReadableError
from course.skipping import skip_cells, stop_skipping

__all__ = [
    "MARKER",
    "SKIPPED",
    "PremiereCelluleArretee",
    "needs_server",
    "passer_sans_postgres",
    "serveur_disponible",
]

MARKER = "# demande le serveur PostgreSQL"
SKIPPED = (
    "Cellule passée\u00a0: elle demande le serveur PostgreSQL, indisponible (la raison est "
    "dite plus haut\u00a0; une fois PostgreSQL installé, relancez la première cellule)."
)


def needs_server(source: str) -> bool:
    """True if a cell starts with the marker line (``MARKER``), as the message says: the same
    words further down (a learner's note) do not skip it."""
    first = next((line for line in source.splitlines() if line.strip()), "")
    return first.strip().startswith(MARKER)


class PremiereCelluleArretee(ReadableError, NameError):
    """The lesson's first cell stopped before it defined the server (another notebook runs the
    lesson, a folder refused): nothing of the lesson can run, whatever PostgreSQL does."""


def passer_sans_postgres(raison: object) -> None:
    """Dit pourquoi PostgreSQL manque, puis fait passer les cellules suivantes qui en ont
    besoin (celles qui commencent par «\u00a0# demande le serveur PostgreSQL\u00a0»)\u00a0; les
    autres s'exécutent."""
    if isinstance(raison, NameError):  # not PostgreSQL: the first cell never got that far
        raise PremiereCelluleArretee(
            "la première cellule de la leçon s'est arrêtée avant de préparer le serveur (son "
            "message dit pourquoi)\u00a0: relancez-la une fois la cause réglée, puis celle-ci. "
            "Les cellules suivantes en ont toutes besoin."
        ) from None
    phrase = str(raison).strip().rstrip(".")
    print(
        f"{phrase}.\nSans serveur PostgreSQL, les cellules qui commencent par "
        f"«\u00a0{MARKER}\u00a0» sont passées (chacune le dit)\u00a0: elles lisent ou écrivent "
        f"sur ce serveur. Les autres s'exécutent\u00a0: ce qui se passe du serveur (ici, les "
        f"fichiers SQLite des instances), les quiz, le bilan et vos propres cellules."
    )
    skip_cells(needs_server, SKIPPED)


def serveur_disponible() -> None:
    """Le serveur a démarré (la première cellule relancée une fois PostgreSQL installé)\u00a0:
    les cellules qui en ont besoin s'exécutent de nouveau."""
    stop_skipping(SKIPPED)
