"""``Event``: one entry of a session's history, stored as JSON in ``events.event_data``."""

from __future__ import annotations

import time
import uuid
from typing import Any

from pydantic import Field, field_serializer

from ._base import EventModel, Record
from .content import Content, FunctionCall, FunctionResponse, Transcription
from .event_actions import EventActions
from .metadata import GenerateContentResponseUsageMetadata, GroundingMetadata
from .node_info import NodeInfo

__all__ = ["Event"]


class Event(EventModel):
    """Un événement de l'historique d'une session (comme ``Event`` d'ADK, même JSON stocké).

    Sans ``id``, il reçoit un uuid4\u00a0; sans ``timestamp``, l'heure actuelle, comme dans ADK.
    """

    model_version: str | None = None
    content: Content | None = None
    grounding_metadata: GroundingMetadata | None = None
    partial: bool | None = None
    turn_complete: bool | None = None
    turn_complete_reason: Any | None = None
    interaction_status: Any | None = None
    finish_reason: Any | None = None
    error_code: str | None = None
    error_message: str | None = None
    interrupted: bool | None = None
    custom_metadata: dict[str, Any] | None = None
    usage_metadata: GenerateContentResponseUsageMetadata | None = None
    live_session_resumption_update: Record | None = None
    live_session_id: str | None = None
    go_away: Record | None = None
    voice_activity: Record | None = None
    input_transcription: Transcription | None = None
    output_transcription: Transcription | None = None
    avg_logprobs: float | None = None
    logprobs_result: Record | None = None
    cache_metadata: Record | None = None
    citation_metadata: Record | None = None
    interaction_id: str | None = None
    environment_id: str | None = None
    invocation_id: str = ""
    author: str = ""
    actions: EventActions = Field(default_factory=EventActions)
    output: Any | None = None
    node_info: NodeInfo = Field(default_factory=NodeInfo)
    long_running_tool_ids: set[str] | None = None
    branch: str | None = None
    isolation_scope: str | None = None
    id: str = ""
    timestamp: float = Field(default_factory=time.time)

    @field_serializer("long_running_tool_ids")
    def _sorted_tool_ids(self, value: set[str] | None) -> list[str] | None:
        # A set has no stable order; ADK stores a sorted list, so do we.
        return None if value is None else sorted(value)

    def model_post_init(self, __context: Any) -> None:
        if not self.id:
            self.id = Event.new_id()

    @staticmethod
    def new_id() -> str:
        """Un nouvel identifiant d'événement (uuid4), comme ADK."""
        return str(uuid.uuid4())

    def get_function_calls(self) -> list[FunctionCall]:
        """Les appels de fonction portés par l'événement (liste vide sinon)."""
        parts = self.content.parts if self.content and self.content.parts else []
        return [p.function_call for p in parts if p.function_call is not None]

    def get_function_responses(self) -> list[FunctionResponse]:
        """Les réponses de fonction portées par l'événement (liste vide sinon)."""
        parts = self.content.parts if self.content and self.content.parts else []
        return [p.function_response for p in parts if p.function_response is not None]

    def is_final_response(self) -> bool:
        """True pour une réponse finale\u00a0: ni appel ni réponse d'outil, pas partielle."""
        if self.actions.skip_summarization or self.long_running_tool_ids:
            return True
        return (
            not self.get_function_calls() and not self.get_function_responses() and not self.partial
        )

    @property
    def text(self) -> str:
        """Le texte de l'événement (ses morceaux de texte mis bout à bout, "" sinon)."""
        parts = self.content.parts if self.content and self.content.parts else []
        return "".join(p.text for p in parts if p.text)
