"""The tutor's tools: they change `user:progression` through the tool context's state.

Each write to `tool_context.state` becomes the `state_delta` of the tool's response event,
exactly as with ADK's `ToolContext`, so the service stores it in `user_states`.
"""

from __future__ import annotations

import copy
from collections.abc import MutableMapping
from typing import Any, Protocol

from .questions import NIVEAU_MAX, NIVEAU_MIN

__all__ = [
    "PROGRESSION_KEY",
    "SUJET",
    "HasState",
    "new_progression",
    "read_progression",
    "apply_answer",
    "fixer_niveau",
    "enregistrer_reponse",
]

PROGRESSION_KEY = "user:progression"
SUJET = "python"
SERIE_LENGTH = 2  # two right answers in a row: level up; two wrong: level down


class HasState(Protocol):
    state: MutableMapping[str, Any]


def new_progression(niveau: int) -> dict[str, Any]:
    """A learner's starting record for the Python quiz."""
    return {"niveau": niveau, "serie": [], "bonnes": 0, "total": 0, "a_revoir": []}


def read_progression(state: MutableMapping[str, Any] | dict[str, Any]) -> dict[str, Any] | None:
    """The learner's Python record from a session state (merged `user:` keys), or None."""
    progression = state.get(PROGRESSION_KEY)
    if not isinstance(progression, dict) or not isinstance(progression.get(SUJET), dict):
        return None
    return progression[SUJET]


def apply_answer(record: dict[str, Any], sujet: str, correcte: bool) -> dict[str, Any]:
    """Return a new record after one answer (the input is left untouched).

    `serie` holds the last results at the current level; two equal results in a row move the
    level up or down and start a new series. A wrong answer puts its topic in `a_revoir`,
    a right one takes it out.
    """
    r = copy.deepcopy(record)
    r["total"] += 1
    r["bonnes"] += int(correcte)
    serie = (r["serie"] + [correcte])[-SERIE_LENGTH:]
    niveau = r["niveau"]
    if serie == [True] * SERIE_LENGTH and niveau < NIVEAU_MAX:
        niveau, serie = niveau + 1, []
    elif serie == [False] * SERIE_LENGTH and niveau > NIVEAU_MIN:
        niveau, serie = niveau - 1, []
    r["niveau"], r["serie"] = niveau, serie
    if not correcte and sujet not in r["a_revoir"]:
        r["a_revoir"].append(sujet)
    if correcte and sujet in r["a_revoir"]:
        r["a_revoir"].remove(sujet)
    return r


def _store(tool_context: HasState, record: dict[str, Any]) -> None:
    progression = copy.deepcopy(tool_context.state.get(PROGRESSION_KEY) or {})
    progression[SUJET] = record
    tool_context.state[PROGRESSION_KEY] = progression


def fixer_niveau(niveau: int, tool_context: HasState) -> dict[str, Any]:
    """Fixe le niveau de départ de l'élève en Python (1 débutant à 5 expert)."""
    if isinstance(niveau, bool) or not isinstance(niveau, int):
        return {"statut": "erreur", "message": f"niveau doit être un entier, reçu {niveau!r}"}
    if not NIVEAU_MIN <= niveau <= NIVEAU_MAX:
        return {"statut": "erreur", "message": f"niveau hors de {NIVEAU_MIN}..{NIVEAU_MAX}"}
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
        return {"statut": "erreur", "message": "niveau inconnu : appeler fixer_niveau d'abord"}
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
