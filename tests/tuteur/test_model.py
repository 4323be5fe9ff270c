"""The rule-based tutor model, its tools and question bank: deterministic and pure."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from course.events import Content, FunctionResponse, Part
from course.tuteur import ModelRequest, RuleTutorModel, TurnModel
from course.tuteur.agent import DeltaState, ToolContext
from course.tuteur.model import QUESTION_KEY, display_name, is_farewell, is_greeting
from course.tuteur.questions import QUESTIONS, choose_question, question_by_id
from course.tuteur.tools import apply_answer, enregistrer_reponse, fixer_niveau, new_progression


def _user(text: str) -> Content:
    return Content(role="user", parts=[Part(text=text)])


def _request(*contents: Content, state: dict | None = None) -> ModelRequest:
    return ModelRequest(contents=list(contents), state=state or {}, user_id="alice")


def _record(**kw: object) -> dict:
    r = new_progression(3)
    r.update(kw)
    return r


def test_level_moves_after_two_equal_answers_and_stays_in_bounds() -> None:
    r = _record()
    r = apply_answer(r, "listes", True)
    assert (r["niveau"], r["serie"]) == (3, [True])
    r = apply_answer(r, "boucles", True)
    assert (r["niveau"], r["serie"], r["bonnes"], r["total"]) == (4, [], 2, 2)
    r = apply_answer(r, "décorateurs de fonction", False)
    assert r == {
        "niveau": 4,
        "serie": [False],
        "bonnes": 2,
        "total": 3,
        "a_revoir": ["décorateurs de fonction"],
    }
    r2 = apply_answer(r, "générateurs", False)
    assert (r2["niveau"], r2["serie"], r2["a_revoir"]) == (
        3,
        [],
        ["décorateurs de fonction", "générateurs"],
    )
    assert r["niveau"] == 4 and r["total"] == 3  # the input record is left untouched
    healed = apply_answer(r2, "décorateurs de fonction", True)
    assert healed["a_revoir"] == ["générateurs"]
    top = apply_answer(apply_answer(_record(niveau=5), "x", True), "x", True)
    assert (top["niveau"], top["serie"]) == (5, [True, True])
    bottom = apply_answer(apply_answer(_record(niveau=1), "x", False), "x", False)
    assert (bottom["niveau"], bottom["serie"], bottom["a_revoir"]) == (1, [False, False], ["x"])


def test_answers_are_normalized_before_judging() -> None:
    assert question_by_id("n4-decorateur").accepts("  @ ")
    assert not question_by_id("n4-decorateur").accepts("#")
    assert question_by_id("n3-comprehension").accepts("[0,2,4]")
    assert question_by_id("n2-chaines").accepts("'pypy'")
    assert question_by_id("n1-print").accepts("Print()")
    assert question_by_id("inexistante") is None
    for q in QUESTIONS:
        assert q.accepts(q.answers[0]) and not q.accepts("")


def test_question_bank_and_choice_are_deterministic() -> None:
    for level in range(1, 6):
        assert len([q for q in QUESTIONS if q.level == level]) == 3
    assert len({q.id for q in QUESTIONS}) == len(QUESTIONS)
    r = _record(niveau=4, total=3, a_revoir=["décorateurs de fonction"])
    assert choose_question(r).id == "n4-decorateur"  # a topic to review comes first
    assert choose_question(r, exclude="n4-decorateur").id == "n4-yield"  # never twice in a row
    assert [choose_question(_record(total=t)).id for t in range(4)] == [
        "n3-comprehension",
        "n3-with",
        "n3-get",
        "n3-comprehension",
    ]


def test_greetings_and_farewells() -> None:
    assert is_greeting("Bonjour !") and is_greeting("salut") and not is_greeting("bon")
    assert is_farewell("Au revoir") and is_farewell("à bientôt !") and is_farewell("quitter")
    assert not is_farewell("fini") and not is_farewell("revoir les listes")


def test_model_follows_the_protocol_and_is_pure() -> None:
    model = RuleTutorModel()
    assert isinstance(model, TurnModel)
    req = _request(_user("Bonjour"))
    assert model.respond(req) == model.respond(req)
    hello = model.respond(req)
    assert hello.content.parts[0].text.startswith("Bonjour Alice !")
    assert hello.state_delta == {QUESTION_KEY: "niveau"}


def test_model_asks_calls_tools_and_handles_empty_or_odd_input() -> None:
    model = RuleTutorModel()
    empty = model.respond(_request(_user("   ")))
    assert "Je n'ai rien reçu" in empty.content.parts[0].text and empty.state_delta == {}
    asked = {QUESTION_KEY: "niveau"}
    bad = model.respond(_request(_user("dix"), state=asked))
    assert "nombre entier de 1 à 5" in bad.content.parts[0].text
    call = model.respond(_request(_user("niveau 2"), state=asked)).content.parts[0].function_call
    assert (call.name, call.args, call.id) == ("fixer_niveau", {"niveau": 2}, "appel-1")
    state = {"user:progression": {"python": _record()}, QUESTION_KEY: "n3-with"}
    judged = model.respond(_request(_user("With"), state=state)).content.parts[0].function_call
    assert judged.args == {
        "question": "n3-with",
        "sujet": "gestionnaires de contexte",
        "correcte": True,
    }
    stray = model.respond(_request(_user("42"), state={"user:progression": {"python": _record()}}))
    assert stray.content.parts[0].text.startswith("Je n'attendais pas de réponse.")
    failed = Content(
        role="user",
        parts=[
            Part(
                function_response=FunctionResponse(
                    id="x", name="fixer_niveau", response={"statut": "erreur", "message": "non"}
                )
            )
        ],
    )
    assert (
        "L'outil fixer_niveau a échoué (non)"
        in model.respond(_request(failed)).content.parts[0].text
    )


def _ctx(state: dict) -> ToolContext:
    return ToolContext(DeltaState(state), "alice", "s1")


def test_tools_write_only_to_the_delta_and_refuse_bad_arguments() -> None:
    base: dict = {}
    ctx = _ctx(base)
    assert fixer_niveau(3, ctx) == {"statut": "ok", "niveau": 3}
    assert base == {} and set(ctx.state.delta) == {"user:progression"}
    assert fixer_niveau(0, _ctx({}))["statut"] == "erreur"
    assert fixer_niveau(True, _ctx({}))["statut"] == "erreur"
    assert fixer_niveau("3", _ctx({}))["statut"] == "erreur"
    assert enregistrer_reponse("q", "listes", True, _ctx({}))["message"].startswith(
        "niveau inconnu"
    )
    assert enregistrer_reponse("q", "", True, ctx)["statut"] == "erreur"
    assert enregistrer_reponse("q", "listes", "oui", ctx)["statut"] == "erreur"
    done = enregistrer_reponse("q", "listes", False, ctx)
    assert done["total"] == 1 and ctx.state["user:progression"]["python"]["a_revoir"] == ["listes"]
    with pytest.raises(TypeError, match="ne se supprime pas"):
        del ctx.state["user:progression"]


def test_importing_the_tutor_writes_nothing_and_needs_no_adk() -> None:
    code = textwrap.dedent(
        """
        import os, sys
        seen = []
        WRITE = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND
        def hook(event, args):
            if event in ("sqlite3.connect", "socket.connect", "socket.getaddrinfo"):
                seen.append(event)
            if event == "open":  # (path, mode, flags): reading code and metadata is fine
                mode, flags = args[1] or "", args[2] or 0
                if any(c in mode for c in "wax+") or flags & WRITE:
                    seen.append(args[0])
        sys.addaudithook(hook)
        import course.tuteur, course.inspecter
        assert not any(m.startswith("google.adk") for m in sys.modules), "google.adk imported"
        assert "pandas" not in sys.modules, "pandas imported"
        print(seen)
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


def test_the_tutor_greets_a_name_with_a_capital_and_keeps_the_id() -> None:
    """French writes a person's name with a capital: « Bonjour Alice ! », not « alice »."""
    assert display_name("alice") == "Alice" and display_name("chloé") == "Chloé"
    assert display_name("o'connor") == "O'Connor"
    assert display_name("jean-paul") == "Jean-Paul"
    model = RuleTutorModel()
    hello = model.respond(_request(_user("Bonjour")))
    assert "alice" not in hello.content.parts[0].text  # control: the request's id is "alice"
    assert _request(_user("Bonjour")).user_id == "alice"
