"""``EventActions``: what an event changes besides the conversation (state, transfers...)."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from ._base import EventModel, Record
from .content import Content
from .metadata import UiWidget

__all__ = ["EventActions", "EventCompaction", "ToolConfirmation"]


class EventCompaction(EventModel):
    """Le résumé d'une suite d'événements (``compacted_content``), entre deux instants."""

    start_timestamp: float
    end_timestamp: float
    compacted_content: Content


class ToolConfirmation(EventModel):
    """La confirmation demandée avant d'exécuter un outil (``hint``, ``confirmed``)."""

    hint: str = ""
    confirmed: bool = False
    payload: Any | None = None


class EventActions(EventModel):
    """Ce que l'événement change en plus du dialogue (comme ``EventActions`` d'ADK)\u00a0; les
    services de session utilisent ``state_delta``."""

    skip_summarization: bool | None = None
    state_delta: dict[str, Any] = Field(default_factory=dict)
    artifact_delta: dict[str, int] = Field(default_factory=dict)
    transfer_to_agent: str | None = None
    transfer_reason: str | None = None
    escalate: bool | None = None
    requested_auth_configs: dict[str, Record] = Field(default_factory=dict)
    requested_tool_confirmations: dict[str, ToolConfirmation] = Field(default_factory=dict)
    compaction: EventCompaction | None = None
    end_of_agent: bool | None = None
    agent_state: dict[str, Any] | None = None
    rewind_before_invocation_id: str | None = None
    route: Any | None = None
    render_ui_widgets: list[UiWidget] | None = None
    set_model_response: Any | None = None
