"""The tutor's question bank: short French Python questions, three per level (1 to 5).

Kept as plain data so the rule-based model stays deterministic and a lesson can show it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "Question",
    "QUESTIONS",
    "LEVEL_MIN",
    "LEVEL_MAX",
    "question_by_id",
    "choose_question",
    "normalize",
]

LEVEL_MIN = 1
LEVEL_MAX = 5


@dataclass(frozen=True)
class Question:
    """One quiz question: its level, its topic (what goes to `a_revoir`), its text, the
    accepted answers (the first one is shown after a wrong answer) and an explanation."""

    id: str
    level: int
    topic: str
    text: str
    answers: tuple[str, ...]
    explanation: str

    def accepts(self, answer: str) -> bool:
        """True when the learner's answer matches one accepted answer once normalized."""
        return normalize(answer) in {normalize(a) for a in self.answers}


def normalize(text: str) -> str:
    """Lower-case, drop spaces, surrounding quotes/backticks and final punctuation."""
    t = "".join(text.lower().split())
    t = t.rstrip(".!;?")
    return t.strip("'\"`«»")


QUESTIONS: tuple[Question, ...] = (
    Question(
        "n1-types",
        1,
        "types de base",
        "Quel est le type de la valeur 3.5 : int, float ou str ?",
        ("float",),
        "3.5 a une partie décimale : c'est un float.",
    ),
    Question(
        "n1-print",
        1,
        "affichage",
        "Quelle fonction affiche du texte à l'écran ?",
        ("print", "print()"),
        "print(...) écrit sur la sortie standard.",
    ),
    Question(
        "n1-division",
        1,
        "opérateurs",
        "Que vaut 7 // 2 ?",
        ("3",),
        "// est la division entière : 7 // 2 vaut 3.",
    ),
    Question(
        "n2-len",
        2,
        "listes",
        "Que vaut len([1, 2, 3]) ?",
        ("3",),
        "len renvoie le nombre d'éléments : 3.",
    ),
    Question(
        "n2-for",
        2,
        "boucles",
        "Quel mot-clé commence une boucle qui parcourt une liste ?",
        ("for",),
        "for x in liste: parcourt les éléments un par un.",
    ),
    Question(
        "n2-chaines",
        2,
        "chaînes de caractères",
        "Que vaut 'py' * 2 ?",
        ("pypy",),
        "Multiplier une chaîne la répète : 'pypy'.",
    ),
    Question(
        "n3-comprehension",
        3,
        "compréhensions de liste",
        "Que vaut [x * 2 for x in range(3)] ?",
        ("[0, 2, 4]",),
        "range(3) donne 0, 1, 2 ; doublés : [0, 2, 4].",
    ),
    Question(
        "n3-with",
        3,
        "gestionnaires de contexte",
        "Quel mot-clé ouvre un gestionnaire de contexte, comme avec open() ?",
        ("with",),
        "with open(...) as f: ferme le fichier même en cas d'erreur.",
    ),
    Question(
        "n3-get",
        3,
        "dictionnaires",
        "Quelle méthode d'un dict renvoie une valeur par défaut si la clé manque ?",
        ("get", ".get", "get()", "dict.get"),
        "d.get(cle, defaut) ne lève pas KeyError.",
    ),
    Question(
        "n4-yield",
        4,
        "générateurs",
        "Quel mot-clé transforme une fonction en générateur ?",
        ("yield",),
        "Une fonction qui contient yield renvoie un générateur.",
    ),
    Question(
        "n4-lambda",
        4,
        "fonctions anonymes",
        "Quel mot-clé crée une fonction anonyme ?",
        ("lambda",),
        "lambda x: x + 1 est une fonction sans nom.",
    ),
    Question(
        "n4-decorateur",
        4,
        "décorateurs de fonction",
        "Quel caractère précède le nom d'un décorateur, au-dessus d'une fonction ?",
        ("@",),
        "On écrit @mon_decorateur juste au-dessus de def.",
    ),
    Question(
        "n5-await",
        5,
        "programmation asynchrone",
        "Quel mot-clé attend le résultat d'une coroutine ?",
        ("await",),
        "await suspend la coroutine jusqu'au résultat.",
    ),
    Question(
        "n5-type",
        5,
        "métaclasses",
        "Quelle est la métaclasse par défaut de toute classe Python ?",
        ("type",),
        "Toute classe est une instance de type, sauf métaclasse explicite.",
    ),
    Question(
        "n5-raise",
        5,
        "exceptions",
        "Quel mot-clé, seul dans un bloc except, relance l'exception en cours ?",
        ("raise",),
        "Un raise seul relance l'exception que l'on est en train de traiter.",
    ),
)

_BY_ID = {q.id: q for q in QUESTIONS}


def question_by_id(question_id: str) -> Question | None:
    """The question with this id, or None (an LLM may invent ids: never trust them blindly)."""
    return _BY_ID.get(question_id)


def choose_question(record: Mapping[str, Any], exclude: str | None = None) -> Question:
    """The next question for a learner's record, deterministically.

    A topic to review (`a_revoir`) at the current level comes first; otherwise the level's
    questions rotate with the number of answers given. `exclude` avoids asking twice in a row.
    """
    level = min(max(int(record.get("niveau", LEVEL_MIN)), LEVEL_MIN), LEVEL_MAX)
    at_level = [q for q in QUESTIONS if q.level == level]
    for topic in record.get("a_revoir", []):
        for q in at_level:
            if q.topic == topic and q.id != exclude:
                return q
    start = int(record.get("total", 0))
    for k in range(len(at_level)):
        q = at_level[(start + k) % len(at_level)]
        if q.id != exclude:
            return q
    return at_level[0]
