"""Message content types, mirroring ``google.genai.types`` field for field.

Field order follows google.genai so that ``model_dump_json(exclude_none=True)`` gives the very
same JSON text as ADK for the same message; fields the course never uses are typed ``Any``.
"""

from __future__ import annotations

from typing import Any

from ._base import EventModel

__all__ = ["Content", "FunctionCall", "FunctionResponse", "Part"]


class FunctionCall(EventModel):
    """Un appel d'outil demandé par le modèle (``Part(function_call=...)``)."""

    id: str | None = None
    args: dict[str, Any] | None = None
    name: str | None = None
    partial_args: Any | None = None
    will_continue: bool | None = None


class FunctionResponse(EventModel):
    """Le résultat d'un appel d'outil, renvoyé au modèle (``Part(function_response=...)``)."""

    will_continue: bool | None = None
    scheduling: Any | None = None
    parts: Any | None = None
    id: str | None = None
    name: str | None = None
    response: dict[str, Any] | None = None


class Part(EventModel):
    """Un morceau de message : du texte, un appel de fonction ou sa réponse."""

    media_resolution: Any | None = None
    code_execution_result: Any | None = None
    executable_code: Any | None = None
    file_data: Any | None = None
    function_call: FunctionCall | None = None
    function_response: FunctionResponse | None = None
    inline_data: Any | None = None
    text: str | None = None
    thought: bool | None = None
    thought_signature: Any | None = None
    video_metadata: Any | None = None


class Content(EventModel):
    """Un message : ses morceaux (``parts``) et qui parle (``"user"`` ou ``"model"``)."""

    parts: list[Part] | None = None
    role: str | None = None
