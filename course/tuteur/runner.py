"""A small Runner with ADK's calling convention: every event of a turn goes through the service.

Order of a turn, as in ADK: the user's event, then the model's events; after a function call,
the tool's response event (carrying the tool's `state_delta`), then the model again, until the
model answers with text only.
"""

from __future__ import annotations

import inspect
import uuid
from collections.abc import AsyncIterator
from typing import Any

from course.events import Content, Part

from .agent import Agent, DeltaState, ToolContext
from .compat import COURSE_TYPES, EventTypes, convert_content, event_types_for
from .model import ModelRequest

__all__ = ["Runner", "UnknownSessionError", "message"]

MAX_STEPS = 8  # model calls per turn: a model that keeps calling tools is stopped


class UnknownSessionError(ValueError):
    """The session asked for does not exist for this app and user."""


def message(text: str) -> Content:
    """Le message de l'élève, prêt pour ``runner.run_async(new_message=...)``."""
    if not isinstance(text, str):
        raise TypeError(f"message attend un texte (str), pas {type(text).__name__}")
    return Content(role="user", parts=[Part(text=text)])


class Runner:
    """Runs one agent against one session service (keyword-only, like ADK's Runner)."""

    def __init__(self, *, agent: Agent, app_name: str, session_service: Any) -> None:
        if not isinstance(app_name, str) or not app_name.strip():
            raise ValueError("app_name doit être un texte non vide")
        self.agent = agent
        self.app_name = app_name
        self.session_service = session_service

    async def run_async(
        self, *, user_id: str, session_id: str, new_message: Any
    ) -> AsyncIterator[Any]:
        """Append and yield the turn's events, the user's message first."""
        if getattr(new_message, "parts", None) is None:
            raise TypeError('new_message doit être un Content : utilisez message("votre texte")')
        session = await self.session_service.get_session(
            app_name=self.app_name, user_id=user_id, session_id=session_id
        )
        if session is None:
            raise UnknownSessionError(
                f"Session « {session_id} » introuvable pour l'élève « {user_id} » "
                f"dans l'application « {self.app_name} » : créez-la avec create_session."
            )
        types = event_types_for(self.session_service)
        invocation_id = "e-" + str(uuid.uuid4())
        user_event = types.Event(
            author="user",
            invocation_id=invocation_id,
            content=convert_content(new_message, types),
        )
        yield await self._append(session, user_event)
        for _ in range(MAX_STEPS):
            calls = []
            async for response in self.agent.model.stream(self._request(session)):
                event = types.Event(
                    author=self.agent.name,
                    invocation_id=invocation_id,
                    content=convert_content(response.content, types),
                    actions=types.EventActions(state_delta=dict(response.state_delta)),
                )
                yield await self._append(session, event)
                calls += [p.function_call for p in response.content.parts or [] if p.function_call]
            if not calls:
                return
            for call in calls:
                event = await self._run_tool(call, session, types, invocation_id)
                yield await self._append(session, event)
        raise RuntimeError(f"Le modèle a dépassé {MAX_STEPS} étapes dans un même tour : arrêt.")

    async def _append(self, session: Any, event: Any) -> Any:
        return await self.session_service.append_event(session=session, event=event)

    def _request(self, session: Any) -> ModelRequest:
        contents = [
            convert_content(e.content, COURSE_TYPES)
            for e in session.events
            if e.content is not None and e.content.parts
        ]
        return ModelRequest(
            contents=contents,
            state=dict(session.state),
            user_id=session.user_id,
            tools=self.agent.tool_descriptions(),
        )

    async def _run_tool(
        self, call: Any, session: Any, types: EventTypes, invocation_id: str
    ) -> Any:
        context = ToolContext(DeltaState(session.state), session.user_id, session.id)
        tool = self.agent.tools.get(call.name)
        if tool is None:
            result: dict[str, Any] = {"statut": "erreur", "message": f"outil inconnu : {call.name}"}
        else:
            try:
                bound = inspect.signature(tool).bind(**(call.args or {}), tool_context=context)
            except TypeError as exc:
                result = {"statut": "erreur", "message": f"arguments invalides : {exc}"}
            else:
                result = tool(*bound.args, **bound.kwargs)
                if inspect.isawaitable(result):
                    result = await result
        response = types.FunctionResponse(id=call.id, name=call.name, response=result)
        return types.Event(
            author=self.agent.name,
            invocation_id=invocation_id,
            content=types.Content(role="user", parts=[types.Part(function_response=response)]),
            actions=types.EventActions(state_delta=dict(context.state.delta)),
        )
