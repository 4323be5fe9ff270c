"""``NodeInfo``: workflow metadata ADK attaches to every event (``{"path": ""}`` by default)."""

from __future__ import annotations

from ._base import EventModel

__all__ = ["NodeInfo"]


class NodeInfo(EventModel):
    """Mirror of ADK's ``NodeInfo``, kept so that stored events match ADK's JSON."""

    path: str = ""
    output_for: list[str] | None = None
    message_as_output: bool | None = None
