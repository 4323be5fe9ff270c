"""The tutor's tools: they change `user:progression` through the tool context's state.

Each write to `tool_context.state` becomes the `state_delta` of the tool's response event,
exactly as with ADK's `ToolContext`, so the service stores it in `user_states`. The tools'
names, parameters and result keys are what the model calls and what the events store, as the
lessons show them: they stay French.
"""

from __future__ import annotations

import copy
from collections.abc import MutableMapping
from typing import Any, Protocol

from .questions import LEVEL_MAX, LEVEL_MIN

__all__ = [
    "PROGRESSION_KEY",
    "STREAK_LENGTH",
    "SUBJECT",
    "HasState",
    "new_progression",
    "read_progression",
    "apply_answer",
    "fixer_niveau",
    "enregistrer_reponse",
]

# The learner's record is data the lesson shows: its keys (`niveau`, `serie`, `bonnes`, `total`,
# `a_revoir`) and this subject's name stay as they are stored.
PROGRESSION_KEY = "user:progression"
SUBJECT = "python"
STREAK_LENGTH = 2  # two right answers in a row: level up; two wrong: level down


class HasState(Protocol):
    state: MutableMapping[str, Any]


def new_progression(level: int) -> dict[str, Any]:
    """A learner's starting record for the Python quiz."""
    return {"niveau": level, "serie": [], "bonnes": 0, "total": 0, "a_revoir": []}


def read_progression(state: MutableMapping[str, Any] | dict[str, Any]) -> dict[str, Any] | None:
    """The learner's Python record from a session state (merged `user:` keys), or None."""
    progression = state.get(PROGRESSION_KEY)
    if not isinstance(progression, dict) or not isinstance(progression.get(SUBJECT), dict):
        return None
    return progression[SUBJECT]


def apply_answer(record: dict[str, Any], topic: str, correct: bool) -> dict[str, Any]:
    """Return a new record after one answer (the input is left untouched).

    `serie` holds the last results at the current level; two equal results in a row move the
    level up or down and start a new series. A wrong answer puts its topic in `a_revoir`,
    a right one takes it out.
    """
    r = copy.deepcopy(record)
    r["total"] += 1
    r["bonnes"] += int(correct)
    streak = (r["serie"] + [correct])[-STREAK_LENGTH:]
    level = r["niveau"]
    if streak == [True] * STREAK_LENGTH and level < LEVEL_MAX:
        level, streak = level + 1, []
    elif streak == [False] * STREAK_LENGTH and level > LEVEL_MIN:
        level, streak = level - 1, []
    r["niveau"], r["serie"] = level, streak
    if not correct and topic not in r["a_revoir"]:
        r["a_revoir"].append(topic)
    if correct and topic in r["a_revoir"]:
        r["a_revoir"].remove(topic)
    return r


def _store(tool_context: HasState, record: dict[str, Any]) -> None:
    progression = copy.deepcopy(tool_context.state.get(PROGRESSION_KEY) or {})
    progression[SUBJECT] = record
    tool_context.state[PROGRESSION_KEY] = progression


def fixer_niveau(niveau: int, tool_context: HasState) -> dict[str, Any]:
    """Fixe le niveau de départ de l'élève en Python (1 débutant à 5 expert)."""
    if isinstance(niveau, bool) or not isinstance(niveau, int):
        return {"statut": "erreur", "message": f"niveau doit être un entier, reçu {niveau!r}"}
    if not LEVEL_MIN <= niveau <= LEVEL_MAX:
        return {"statut": "erreur", "message": f"niveau hors de {LEVEL_MIN}..{LEVEL_MAX}"}
    record = read_progression(tool_context.state)
    record = copy.deepcopy(record) if record else new_progression(niveau)
    record["niveau"] = niveau
    record["serie"] = []
    _store(tool_context, record)
    return {"statut": "ok", "niveau": niveau}


def enregistrer_reponse(
    question: str, sujet: str, correcte: bool, tool_context: HasState
) -> dict[str, Any]:
    """Enregistre une réponse jugée (juste ou fausse) et met à jour la progression."""
    if not isinstance(correcte, bool) or not isinstance(sujet, str) or not sujet.strip():
        return {"statut": "erreur", "message": "il faut un sujet (texte) et correcte (booléen)"}
    record = read_progression(tool_context.state)
    if record is None:
        return {"statut": "erreur", "message": "niveau inconnu : appeler fixer_niveau d'abord"}
    before = record["niveau"]
    record = apply_answer(record, sujet, correcte)
    _store(tool_context, record)
    return {
        "statut": "ok",
        "question": question,
        "correcte": correcte,
        "ancien_niveau": before,
        "niveau": record["niveau"],
        "bonnes": record["bonnes"],
        "total": record["total"],
    }
