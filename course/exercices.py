"""The check cell of a lesson's exercise: a miss said in one French line, with the hint that
climbs its ladder, instead of a traceback through the check's ``assert`` lines or SQLite's
English (« no such table: user_state »). The learner's own error (a TypeError in their
function) keeps its traceback: it points into their code, where the fix is."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager

from course.hints import LADDERS
from course.readable_error import ReadableError

__all__ = ["ExerciceNonReussi", "sqlite_en_francais", "verification"]


class ExerciceNonReussi(ReadableError, AssertionError):
    """A check of an exercise that fails: still an AssertionError, shown as its French lines."""


# SQLite's messages a learner's query meets most, in French (the rest is quoted as it is)
_SQLITE = (
    (
        re.compile(r"no such table[:] (.+)"),
        "la table «\u00a0{0}\u00a0» n'existe pas dans ce fichier",
    ),
    (
        re.compile(r"no such column[:] (.+)"),
        "la colonne «\u00a0{0}\u00a0» n'existe pas",
    ),
    (
        re.compile(r'near "(.*)": syntax error'),
        "erreur de syntaxe SQL près de «\u00a0{0}\u00a0»",
    ),
    (
        re.compile(r"incomplete input"),
        "requête SQL incomplète (parenthèse ou apostrophe à fermer\u00a0?)",
    ),
    (
        re.compile(r"unrecognized token[:] (.+)"),
        "élément SQL non reconnu\u00a0: {0}",
    ),
    (
        re.compile(r"malformed JSON"),
        "JSON mal formé",
    ),
    (  # older SQLite says « bad JSON path: 'a' », newer « JSON path error near 'a' »
        re.compile(r"(?:bad JSON path[:] |JSON path error near )'{0,1}([^']*)'{0,1}"),
        "chemin JSON invalide\u00a0: {0}",
    ),
    (
        re.compile(
            r"Incorrect number of bindings supplied\. The current statement uses (\d+), and "
            r"there are (\d+) supplied\."
        ),
        "la requête attend {0} valeur(s) pour ses «\u00a0?\u00a0» et en reçoit {1}",
    ),
    (
        re.compile(r"You can only execute one statement at a time\."),
        "une seule instruction SQL à la fois",
    ),
)


def sqlite_en_francais(erreur: sqlite3.Error) -> str:
    """Ce que SQLite a répondu, en français quand la phrase est connue."""
    message = str(erreur)
    for pattern, french in _SQLITE:
        if found := pattern.fullmatch(message):
            return french.format(*found.groups())
    return f"SQLite a répondu «\u00a0{message}\u00a0»"


@contextmanager
def verification(exercice: str) -> Iterator[None]:
    """La cellule de vérification d'un exercice\u00a0: un échec dit en une ligne, en français,
    avec l'indice à demander (``indice(1, "<exercice>")``)."""
    hint = f"\nBloqué\u00a0? indice(1, {exercice!r}), puis 2 et 3." if exercice in LADDERS else ""
    try:
        yield
    except NotImplementedError:
        raise ExerciceNonReussi(
            f"l'exercice {exercice} n'est pas encore écrit\u00a0: complétez sa cellule (à la "
            f"place de raise NotImplementedError), exécutez-la, puis celle-ci.{hint}"
        ) from None
    except AssertionError as exc:
        if isinstance(exc, ExerciceNonReussi):
            raise
        raise ExerciceNonReussi(f"{exc or 'une vérification a échoué'}{hint}") from None
    except sqlite3.Error as exc:
        raise ExerciceNonReussi(
            f"votre requête est refusée\u00a0: {sqlite_en_francais(exc)}.{hint}"
        ) from None
