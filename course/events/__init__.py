"""Event models of the course's session service, compatible with google-adk 2.10.

``Event``, ``EventActions`` mirror ``google.adk.events``; ``Content``, ``Part``, ``FunctionCall``,
``FunctionResponse`` mirror ``google.genai.types``. The JSON they produce is what ADK stores.
"""

from .content import Content, FunctionCall, FunctionResponse, Part
from .event import Event
from .event_actions import EventActions
from .node_info import NodeInfo

__all__ = [
    "Content",
    "Event",
    "EventActions",
    "FunctionCall",
    "FunctionResponse",
    "NodeInfo",
    "Part",
]
