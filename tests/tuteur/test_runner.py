"""The Runner appends every event of a turn through any service (course's and ADK's)."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from course.events import Content, FunctionCall, Part
from course.tuteur import (
    APP_NAME,
    Agent,
    ModelRequest,
    ModelResponse,
    Runner,
    Tuteur,
    UnknownSessionError,
    message,
)


async def _turn(runner: Runner, user: str, session_id: str, text: str) -> list[Any]:
    return [
        e
        async for e in runner.run_async(
            user_id=user, session_id=session_id, new_message=message(text)
        )
    ]


def _kinds(events: list[Any]) -> list[str]:
    out = []
    for e in events:
        part = e.content.parts[0]
        out.append(
            "call" if part.function_call else "response" if part.function_response else e.author
        )
    return out


async def test_turn_appends_user_then_call_response_reply(session_service: Any) -> None:
    runner = Runner(agent=Tuteur(), app_name=APP_NAME, session_service=session_service)
    s = await session_service.create_session(app_name=APP_NAME, user_id="alice")
    first = await _turn(runner, "alice", s.id, "Bonjour")
    assert _kinds(first) == ["user", "tuteur"]
    second = await _turn(runner, "alice", s.id, "3")
    assert _kinds(second) == ["user", "call", "response", "tuteur"]
    call = second[1].content.parts[0].function_call
    response = second[2].content.parts[0].function_response
    assert (call.name, call.args, call.id) == ("fixer_niveau", {"niveau": 3}, "appel-1")
    assert (response.name, response.id, response.response["statut"]) == (
        "fixer_niveau",
        "appel-1",
        "ok",
    )
    assert second[2].content.role == "user" and second[1].content.role == "model"
    assert second[2].actions.state_delta["user:progression"]["python"]["niveau"] == 3
    assert "niveau 3" in second[3].content.parts[0].text
    # every yielded event is in the service, in the same order, sharing one invocation per turn
    stored = await session_service.get_session(app_name=APP_NAME, user_id="alice", session_id=s.id)
    assert [e.id for e in stored.events] == [e.id for e in first + second]
    assert len({e.invocation_id for e in second}) == 1
    assert first[0].invocation_id != second[0].invocation_id
    assert await session_service.get_user_state(app_name=APP_NAME, user_id="alice") == {
        "progression": {
            "python": {"niveau": 3, "serie": [], "bonnes": 0, "total": 0, "a_revoir": []}
        }
    }


async def test_returning_learner_greeted_with_level_from_user_state(session_service: Any) -> None:
    runner = Runner(agent=Tuteur(), app_name=APP_NAME, session_service=session_service)
    s = await session_service.create_session(app_name=APP_NAME, user_id="alice")
    for text in ("Bonjour", "4", "yield"):
        await _turn(runner, "alice", s.id, text)
    fresh = await session_service.create_session(app_name=APP_NAME, user_id="alice")
    reply = await _turn(runner, "alice", fresh.id, "Bonjour")
    assert len(reply) == 2
    assert "Bon retour, Alice ! Tu es au niveau 4 (1 bonne réponse sur 1)" in (
        reply[1].content.parts[0].text
    )
    # another learner starts from scratch: user state is per learner
    other = await session_service.create_session(app_name=APP_NAME, user_id="bob")
    hello = await _turn(runner, "bob", other.id, "Bonjour")
    assert "Quel est ton niveau" in hello[1].content.parts[0].text


async def test_unknown_session_gives_french_error(session_service: Any) -> None:
    runner = Runner(agent=Tuteur(), app_name=APP_NAME, session_service=session_service)
    with pytest.raises(UnknownSessionError, match="Session « nulle-part » introuvable"):
        await _turn(runner, "alice", "nulle-part", "Bonjour")
    s = await session_service.create_session(app_name=APP_NAME, user_id="alice")
    with pytest.raises(UnknownSessionError, match="introuvable pour l'élève « bob »"):
        await _turn(runner, "bob", s.id, "Bonjour")  # someone else's session


async def test_text_instead_of_content_is_refused(session_service: Any) -> None:
    runner = Runner(agent=Tuteur(), app_name=APP_NAME, session_service=session_service)
    s = await session_service.create_session(app_name=APP_NAME, user_id="alice")
    with pytest.raises(TypeError, match="utilisez message"):
        async for _ in runner.run_async(user_id="alice", session_id=s.id, new_message="Bonjour"):
            pass
    with pytest.raises(TypeError, match="message attend un texte"):
        message(42)  # type: ignore[arg-type]
    got = await session_service.get_session(app_name=APP_NAME, user_id="alice", session_id=s.id)
    assert got.events == []


class ScriptedModel:
    """Stands for an LLM client: it only follows the TurnModel protocol."""

    def __init__(self) -> None:
        self.requests: list[ModelRequest] = []

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelResponse]:
        self.requests.append(request)
        last = request.contents[-1].parts[0]
        if last.function_response is None:
            call = FunctionCall(id="c1", name="noter", args={"mot": last.text})
            yield ModelResponse(Content(role="model", parts=[Part(function_call=call)]))
        else:
            reply = f"J'ai noté {last.function_response.response['mot']}."
            yield ModelResponse(Content(role="model", parts=[Part(text=reply)]), {"vu": True})


def noter(mot: str, tool_context: Any) -> dict[str, Any]:
    """Garde le dernier mot de l'élève."""
    tool_context.state["user:dernier_mot"] = mot
    return {"mot": mot}


async def test_any_turn_model_plugs_in_without_touching_the_runner(session_service: Any) -> None:
    model = ScriptedModel()
    agent = Agent(name="scribe", model=model, tools={"noter": noter})
    runner = Runner(agent=agent, app_name="carnet", session_service=session_service)
    s = await session_service.create_session(app_name="carnet", user_id="zoe")
    events = await _turn(runner, "zoe", s.id, "pomme")
    assert _kinds(events) == ["user", "call", "response", "scribe"]
    assert events[-1].content.parts[0].text == "J'ai noté pomme."
    assert model.requests[0].tools == {"noter": "Garde le dernier mot de l'élève."}
    assert model.requests[1].state["user:dernier_mot"] == "pomme"
    got = await session_service.get_session(app_name="carnet", user_id="zoe", session_id=s.id)
    assert got.state["vu"] is True and got.state["user:dernier_mot"] == "pomme"


async def test_bad_tool_call_is_answered_not_crashed(session_service: Any) -> None:
    class Confused(ScriptedModel):
        async def stream(self, request: ModelRequest) -> AsyncIterator[ModelResponse]:
            last = request.contents[-1].parts[0]
            if last.function_response is None:
                calls = [
                    Part(function_call=FunctionCall(id="a", name="inconnu", args={})),
                    Part(function_call=FunctionCall(id="b", name="noter", args={"x": 1})),
                ]
                yield ModelResponse(Content(role="model", parts=calls))
            else:
                yield ModelResponse(Content(role="model", parts=[Part(text="Désolé.")]))

    agent = Agent(name="scribe", model=Confused(), tools={"noter": noter})
    runner = Runner(agent=agent, app_name="carnet", session_service=session_service)
    s = await session_service.create_session(app_name="carnet", user_id="zoe")
    events = await _turn(runner, "zoe", s.id, "pomme")
    assert _kinds(events) == ["user", "call", "response", "response", "scribe"]
    errors = [e.content.parts[0].function_response.response for e in events[2:4]]
    assert errors[0] == {"statut": "erreur", "message": "outil inconnu : inconnu"}
    assert errors[1]["statut"] == "erreur" and "arguments invalides" in errors[1]["message"]


async def test_interrupted_turn_keeps_what_was_already_stored(
    sqlite_db_path: Path, service_factory: Any
) -> None:
    """Cancelling a turn (what Ctrl-C does) keeps every event appended before it."""
    started = asyncio.Event()

    class Hangs(ScriptedModel):
        async def stream(self, request: ModelRequest) -> AsyncIterator[ModelResponse]:
            if request.contents[-1].parts[0].function_response is not None:
                started.set()
                await asyncio.sleep(3600)
            async for r in super().stream(request):
                yield r

    service = service_factory("course-sqlite", sqlite_db_path)
    agent = Agent(name="scribe", model=Hangs(), tools={"noter": noter})
    runner = Runner(agent=agent, app_name="carnet", session_service=service)
    s = await service.create_session(app_name="carnet", user_id="zoe")
    task = asyncio.ensure_future(_turn(runner, "zoe", s.id, "pomme"))
    await asyncio.wait_for(started.wait(), 10)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await service.close()
    con = sqlite3.connect(sqlite_db_path)
    rows = [
        json.loads(r[0]) for r in con.execute("SELECT event_data FROM events ORDER BY timestamp")
    ]
    state = con.execute("SELECT state FROM user_states").fetchone()
    con.close()
    assert [r["author"] for r in rows] == ["user", "scribe", "scribe"]
    assert rows[2]["content"]["parts"][0]["function_response"]["response"] == {"mot": "pomme"}
    assert json.loads(state[0]) == {"dernier_mot": "pomme"}


async def test_a_model_that_never_stops_calling_tools_is_stopped(session_service: Any) -> None:
    class Loops(ScriptedModel):
        async def stream(self, request: ModelRequest) -> AsyncIterator[ModelResponse]:
            call = FunctionCall(id=f"c{len(request.contents)}", name="noter", args={"mot": "x"})
            yield ModelResponse(Content(role="model", parts=[Part(function_call=call)]))

    agent = Agent(name="scribe", model=Loops(), tools={"noter": noter})
    runner = Runner(agent=agent, app_name="carnet", session_service=session_service)
    s = await session_service.create_session(app_name="carnet", user_id="zoe")
    with pytest.raises(RuntimeError, match="Le modèle a dépassé 8 étapes"):
        await _turn(runner, "zoe", s.id, "pomme")
    got = await session_service.get_session(app_name="carnet", user_id="zoe", session_id=s.id)
    assert len(got.events) == 1 + 2 * 8  # everything done before the stop is kept
