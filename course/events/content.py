"""Message content types, mirroring ``google.genai.types`` field for field.

Field order follows google.genai so that ``model_dump_json(exclude_none=True)`` gives the very
same JSON text as ADK for the same message. Every kind of ``Part`` google.genai defines has its
model here, so that what comes back from a session service reads as it does with ADK
(``part.inline_data.data`` is the bytes stored, ``part.executable_code.code`` the code): bytes
are stored as URL-safe base64, as ADK does, and read back as bytes. google.genai's enums
(``Outcome``, ``Language``...) are plain strings here: ADK's are ``str`` enums, so the same
comparisons hold.
"""

from __future__ import annotations

from typing import Any

from ._base import EventModel

__all__ = [
    "Blob",
    "CodeExecutionResult",
    "Content",
    "ExecutableCode",
    "FileData",
    "FunctionCall",
    "FunctionResponse",
    "FunctionResponseBlob",
    "FunctionResponseFileData",
    "FunctionResponsePart",
    "Part",
    "PartMediaResolution",
    "PartialArg",
    "SpeechMetadata",
    "ToolCall",
    "ToolResponse",
    "Transcription",
    "VideoMetadata",
    "WordInfo",
]


class Blob(EventModel):
    """Des octets dans le message (une image, un son...)\u00a0: ``data`` et leur ``mime_type``."""

    data: bytes | None = None
    display_name: str | None = None
    mime_type: str | None = None


class FileData(EventModel):
    """Un fichier désigné par son adresse (``file_uri``), pas par ses octets."""

    display_name: str | None = None
    file_uri: str | None = None
    mime_type: str | None = None


class ExecutableCode(EventModel):
    """Du code écrit par le modèle pour être exécuté (``code``, ``language``)."""

    code: str | None = None
    language: str | None = None
    id: str | None = None


class CodeExecutionResult(EventModel):
    """Le résultat de l'exécution d'un ``ExecutableCode`` (``outcome``, ``output``)."""

    outcome: str | None = None
    output: str | None = None
    id: str | None = None


class VideoMetadata(EventModel):
    """Le passage d'une vidéo à lire (début, fin, images par seconde)."""

    end_offset: str | None = None
    fps: float | None = None
    start_offset: str | None = None


class PartMediaResolution(EventModel):
    """La résolution demandée pour lire un média."""

    level: str | None = None
    num_tokens: int | None = None


class PartialArg(EventModel):
    """Un argument d'appel de fonction reçu par morceaux (flux)."""

    bool_value: bool | None = None
    json_path: str | None = None
    null_value: str | None = None
    number_value: float | None = None
    string_value: str | None = None
    will_continue: bool | None = None


class FunctionCall(EventModel):
    """Un appel d'outil demandé par le modèle (``Part(function_call=...)``)."""

    id: str | None = None
    args: dict[str, Any] | None = None
    name: str | None = None
    partial_args: list[PartialArg] | None = None
    will_continue: bool | None = None


class FunctionResponseBlob(EventModel):
    """Des octets joints à une réponse d'outil."""

    mime_type: str | None = None
    data: bytes | None = None
    display_name: str | None = None


class FunctionResponseFileData(EventModel):
    """Un fichier joint à une réponse d'outil, par son adresse."""

    file_uri: str | None = None
    mime_type: str | None = None
    display_name: str | None = None


class FunctionResponsePart(EventModel):
    """Un morceau (média) d'une réponse d'outil."""

    inline_data: FunctionResponseBlob | None = None
    file_data: FunctionResponseFileData | None = None
    media_processing: str | None = None


class FunctionResponse(EventModel):
    """Le résultat d'un appel d'outil, renvoyé au modèle (``Part(function_response=...)``)."""

    will_continue: bool | None = None
    scheduling: str | None = None
    parts: list[FunctionResponsePart] | None = None
    id: str | None = None
    name: str | None = None
    response: dict[str, Any] | None = None


class ToolCall(EventModel):
    """Un appel d'un outil intégré au modèle (recherche web...)."""

    id: str | None = None
    tool_type: str | None = None
    args: dict[str, Any] | None = None


class ToolResponse(EventModel):
    """La réponse d'un outil intégré au modèle."""

    id: str | None = None
    tool_type: str | None = None
    response: dict[str, Any] | None = None


class WordInfo(EventModel):
    """Un mot d'une transcription, avec sa place dans le son."""

    word: str | None = None
    start_offset: str | None = None
    end_offset: str | None = None


class Transcription(EventModel):
    """La transcription écrite d'un son (``text``)."""

    text: str | None = None
    finished: bool | None = None
    language_code: str | None = None
    speaker_label: str | None = None
    words: list[WordInfo] | None = None
    start_offset: str | None = None
    end_offset: str | None = None


class SpeechMetadata(EventModel):
    """Qui parle, et sur quel ton."""

    speaker: str | None = None
    style: str | None = None


class Part(EventModel):
    """Un morceau de message\u00a0: du texte, un appel de fonction ou sa réponse, des
    octets, un fichier, du code et son résultat..."""

    media_resolution: PartMediaResolution | None = None
    code_execution_result: CodeExecutionResult | None = None
    executable_code: ExecutableCode | None = None
    file_data: FileData | None = None
    function_call: FunctionCall | None = None
    function_response: FunctionResponse | None = None
    inline_data: Blob | None = None
    text: str | None = None
    thought: bool | None = None
    thought_signature: bytes | None = None
    video_metadata: VideoMetadata | None = None
    tool_call: ToolCall | None = None
    tool_response: ToolResponse | None = None
    part_metadata: dict[str, Any] | None = None
    audio_transcription: Transcription | None = None
    media_processing: str | None = None
    speech_metadata: SpeechMetadata | None = None


class Content(EventModel):
    """Un message\u00a0: ses morceaux (``parts``) et qui parle (``"user"`` ou ``"model"``)."""

    parts: list[Part] | None = None
    role: str | None = None
