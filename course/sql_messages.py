"""What SQLite and PostgreSQL answer a learner's query most often, in French: one table for the
lessons' checks (course.exercices) and the TP's criteria (course.labo.criteria). Read from the
databases' own wording: a version that changes it falls back to quoting it."""

from __future__ import annotations

import re

__all__ = ["sql_in_french"]

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
    (
        re.compile(r"no such function[:] (.+)"),
        "la fonction SQL «\u00a0{0}\u00a0» n'existe pas (son nom est-il bien écrit\u00a0?)",
    ),
    (
        re.compile(r"ambiguous column name[:] (.+)"),
        "la colonne «\u00a0{0}\u00a0» est dans deux tables de la requête\u00a0: précisez "
        "laquelle (sessions.{0}, par exemple)",
    ),
    (
        re.compile(r"cannot VACUUM from within a transaction"),
        "VACUUM ne s'exécute pas dans une transaction ouverte\u00a0: validez-la d'abord (commit)",
    ),
)


# PostgreSQL's (lesson 7, through asyncpg), the same way
_POSTGRES = (
    (
        re.compile(r'syntax error at or near "(.*)"'),
        "erreur de syntaxe SQL près de «\u00a0{0}\u00a0»",
    ),
    (
        re.compile(r'relation "(.*)" does not exist'),
        "la table «\u00a0{0}\u00a0» n'existe pas",
    ),
    (
        re.compile(r'column "(.*)" does not exist'),
        "la colonne «\u00a0{0}\u00a0» n'existe pas",
    ),
    (  # asyncpg's own, before the query reaches the server
        re.compile(
            r"the server expects (\d+) arguments{0,1} for this query, (\d+) (was|were) passed.*",
            re.S,
        ),
        "la requête attend {0} valeur(s) pour ses $1, $2… et en reçoit {1}",
    ),
)


def sql_in_french(message: str, postgres: bool = False) -> str | None:
    """`message` (SQLite's, or PostgreSQL's through asyncpg) in French; None if unknown."""
    for pattern, french in _POSTGRES if postgres else _SQLITE:
        if found := pattern.fullmatch(message):
            return french.format(*found.groups())
    return None
