"""What a model's response says about itself: tokens used, sources, citations, widgets.

``Event.usage_metadata`` and ``Event.grounding_metadata`` mirror google.genai field for field
(the search entry point holds bytes, read back as bytes); the other response objects that ADK
types with google.genai's classes (citations, log probabilities, live-session updates...) are
kept as ``Record``: the same JSON, read with the same attribute names.
"""

from __future__ import annotations

from typing import Any

from ._base import EventModel, Record

__all__ = [
    "GenerateContentResponseUsageMetadata",
    "GroundingMetadata",
    "ModalityTokenCount",
    "SearchEntryPoint",
    "UiWidget",
]


class ModalityTokenCount(EventModel):
    """Le nombre de jetons d'un type de contenu (texte, image...)."""

    modality: str | None = None
    token_count: int | None = None


class GenerateContentResponseUsageMetadata(EventModel):
    """Les jetons consommés par une réponse du modèle (``Event.usage_metadata``)."""

    cache_tokens_details: list[ModalityTokenCount] | None = None
    cached_content_token_count: int | None = None
    candidates_token_count: int | None = None
    candidates_tokens_details: list[ModalityTokenCount] | None = None
    prompt_token_count: int | None = None
    prompt_tokens_details: list[ModalityTokenCount] | None = None
    thoughts_token_count: int | None = None
    tool_use_prompt_token_count: int | None = None
    tool_use_prompt_tokens_details: list[ModalityTokenCount] | None = None
    total_token_count: int | None = None
    traffic_type: str | None = None


class SearchEntryPoint(EventModel):
    """Le point d'entrée d'une recherche web (son rendu, et des octets)."""

    rendered_content: str | None = None
    sdk_blob: bytes | None = None


class GroundingMetadata(Record):
    """Les sources sur lesquelles s'appuie une réponse (recherche web, documents...)."""

    image_search_queries: list[str] | None = None
    grounding_chunks: list[Record] | None = None
    grounding_supports: list[Record] | None = None
    retrieval_metadata: Record | None = None
    search_entry_point: SearchEntryPoint | None = None
    web_search_queries: list[str] | None = None
    google_maps_widget_context_token: str | None = None
    retrieval_queries: list[str] | None = None
    source_flagging_uris: list[Record] | None = None


class UiWidget(EventModel):
    """Un élément d'interface à afficher (``EventActions.render_ui_widgets``)."""

    id: str
    provider: str
    payload: dict[str, Any]
