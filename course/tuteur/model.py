"""The turn model: the part of an agent that an LLM would play, here a deterministic rule set.

The Runner only knows the `TurnModel` protocol (`stream(request)` yields `ModelResponse`s): an
LLM client that follows it replaces `RuleTutorModel` without touching the Runner. No
randomness and no clock: same text every run.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from course.events import Content, FunctionCall, Part

from .questions import LEVEL_MAX, LEVEL_MIN, Question, choose_question, question_by_id
from .tools import read_progression

__all__ = [
    "QUESTION_KEY",
    "ModelRequest",
    "ModelResponse",
    "TurnModel",
    "RuleTutorModel",
    "is_farewell",
    "display_name",
    "is_greeting",
]

# Session state the lesson shows: what the tutor is waiting for, a question's id or ASK_LEVEL.
QUESTION_KEY = "question_en_cours"
ASK_LEVEL = "niveau"

# A user id is lower case in code ("alice"); the tutor greets a person: « Bonjour Alice ! ».
_NAME_START = re.compile(r"(^|[\s'’-])(\w)")

_GREETINGS = ("bonjour", "salut", "coucou", "bonsoir", "hello")
_FAREWELLS = ("au revoir", "à bientôt", "a bientot", "bye", "quitter", "fin", "stop")


@dataclass(frozen=True)
class ModelRequest:
    """What the model sees: the conversation, the merged session state and the tools."""

    contents: Sequence[Content]
    state: Mapping[str, Any]
    user_id: str
    tools: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ModelResponse:
    """One model output: a text or function-call content, and state to record with it."""

    content: Content
    state_delta: dict[str, Any] = field(default_factory=dict)


@runtime_checkable
class TurnModel(Protocol):
    def stream(self, request: ModelRequest) -> AsyncIterator[ModelResponse]:
        """Yield the model's responses for one step of the turn."""
        ...


def _words(text: str) -> str:
    return " ".join(re.sub(r"[!?.,;:]", " ", text.lower()).split())


def display_name(user_id: str) -> str:
    """The name the tutor says: each word of the id capitalised (« o'connor » → « O'Connor »),
    since French writes a person's name with a capital; the id itself stays as it is."""
    return _NAME_START.sub(lambda m: m[1] + m[2].upper(), user_id)


def is_greeting(text: str) -> bool:
    """True for « Bonjour », « Salut ! »…"""
    words = _words(text).split()
    return bool(words) and words[0] in _GREETINGS


def is_farewell(text: str) -> bool:
    """True for « au revoir », « à bientôt », « quitter »…: the learner ends the session."""
    t = _words(text)
    return any(t == f or t.startswith(f + " ") for f in _FAREWELLS)


def _text(text: str, **state_delta: Any) -> ModelResponse:
    return ModelResponse(Content(role="model", parts=[Part(text=text)]), dict(state_delta))


def _ask(q: Question, intro: str = "") -> ModelResponse:
    text = f"{intro}Question (niveau {q.level}, {q.topic}) : {q.text}"
    return _text(text, **{QUESTION_KEY: q.id})


def _answers(right: int, total: int) -> str:
    """« 1 bonne réponse sur 1 », « 2 bonnes réponses sur 3 »; none yet, said so."""
    if not total:
        return "pas encore de réponse"
    return (
        f"{right} bonne réponse sur {total}"
        if right <= 1
        else (f"{right} bonnes réponses sur {total}")
    )


def _summary(record: Mapping[str, Any]) -> str:
    s = f"niveau {record['niveau']} ({_answers(record['bonnes'], record['total'])})"
    if record["a_revoir"]:
        s += ". À revoir : " + ", ".join(record["a_revoir"])
    return s


class RuleTutorModel:
    """A French Python-quiz tutor that follows fixed rules and calls the progression tools."""

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelResponse]:
        yield self.respond(request)

    def respond(self, request: ModelRequest) -> ModelResponse:
        """The single response for this step (pure function of the request)."""
        last = request.contents[-1] if request.contents else None
        parts = list(last.parts or []) if last is not None else []
        answers = [p.function_response for p in parts if p.function_response is not None]
        if answers:
            return self._after_tool(request, answers[0].name, dict(answers[0].response or {}))
        text = "".join(p.text or "" for p in parts)
        return self._after_user(request, text)

    def _call(self, request: ModelRequest, name: str, args: dict[str, Any]) -> ModelResponse:
        n = sum(1 for c in request.contents for p in c.parts or [] if p.function_call is not None)
        call = FunctionCall(id=f"appel-{n + 1}", name=name, args=args)
        return ModelResponse(Content(role="model", parts=[Part(function_call=call)]))

    def _after_user(self, request: ModelRequest, text: str) -> ModelResponse:
        user, state = display_name(request.user_id), request.state
        record = read_progression(state)
        pending = state.get(QUESTION_KEY)
        if not text.strip():
            return _text("Je n'ai rien reçu : écris ta réponse, ou « au revoir » pour terminer.")
        if is_farewell(text):
            summary = f" Bilan : {_summary(record)}." if record else ""
            return _text(f"À bientôt, {user} !{summary}", **{QUESTION_KEY: None})
        welcome_new = _text(
            f"Bonjour {user} ! Je suis ton tuteur de Python. Quel est ton niveau, "
            f"de {LEVEL_MIN} (débutant) à {LEVEL_MAX} (expert) ?",
            **{QUESTION_KEY: ASK_LEVEL},
        )
        if is_greeting(text):
            if record is None:
                return welcome_new
            welcome = f"Bon retour, {user} ! Tu es au {_summary(record)}. "
            return _ask(choose_question(record), welcome)
        if record is None or pending == ASK_LEVEL:
            digits = re.findall(r"\d+", text)
            if len(digits) == 1 and LEVEL_MIN <= int(digits[0]) <= LEVEL_MAX:
                return self._call(request, "fixer_niveau", {"niveau": int(digits[0])})
            if pending != ASK_LEVEL:
                return welcome_new
            return _text(
                f"Réponds par un nombre entier de {LEVEL_MIN} à {LEVEL_MAX}, s'il te plaît.",
                **{QUESTION_KEY: ASK_LEVEL},
            )
        question = question_by_id(pending) if isinstance(pending, str) else None
        if question is None:
            return _ask(choose_question(record), "Je n'attendais pas de réponse. ")
        correct = question.accepts(text)
        args = {"question": question.id, "sujet": question.topic, "correcte": correct}
        return self._call(request, "enregistrer_reponse", args)

    def _after_tool(
        self, request: ModelRequest, name: str, result: dict[str, Any]
    ) -> ModelResponse:
        record = read_progression(request.state)
        if result.get("statut") != "ok" or record is None:
            detail = result.get("message", "réponse inattendue")
            return _text(f"L'outil {name} a échoué ({detail}). Reprenons : écris « bonjour ».")
        if name == "fixer_niveau":
            return _ask(choose_question(record), f"C'est noté : niveau {record['niveau']}. ")
        asked = question_by_id(str(result.get("question")))
        intro = "Bravo, c'est juste ! " if result.get("correcte") else "Ce n'est pas ça. "
        if asked is not None:
            if not result.get("correcte"):
                intro += f"La réponse attendue était « {asked.answers[0]} ». "
            intro += asked.explanation + " "
        if result["niveau"] > result["ancien_niveau"]:
            intro += f"Tu passes au niveau {result['niveau']} ! "
        elif result["niveau"] < result["ancien_niveau"]:
            intro += f"On revient au niveau {result['niveau']} pour consolider. "
        return _ask(choose_question(record, exclude=asked.id if asked else None), intro)
