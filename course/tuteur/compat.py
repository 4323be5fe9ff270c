"""Build events with the session service's own classes.

The course's services take `course.events` objects; google-adk's services take
`google.adk.events.Event` and `google.genai.types` contents (they serialise and re-read them
with their own pydantic models). The Runner therefore asks `event_types_for(service)` which
classes to build with, and converts contents part by part at that boundary. The model always
works with `course.events` contents, whatever the service.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["EventTypes", "COURSE_TYPES", "event_types_for", "is_adk_service", "convert_content"]


@dataclass(frozen=True)
class EventTypes:
    """The six classes needed to build an event with tool calls."""

    Event: Any
    EventActions: Any
    Content: Any
    Part: Any
    FunctionCall: Any
    FunctionResponse: Any


def _course_types() -> EventTypes:
    from course import events as e

    return EventTypes(
        e.Event, e.EventActions, e.Content, e.Part, e.FunctionCall, e.FunctionResponse
    )


def _adk_types() -> EventTypes:
    from google.adk.events import Event, EventActions
    from google.genai import types as t

    return EventTypes(Event, EventActions, t.Content, t.Part, t.FunctionCall, t.FunctionResponse)


COURSE_TYPES = _course_types()


def is_adk_service(service: object) -> bool:
    """True when the service is (or derives from) one of google-adk's own classes."""
    return any(c.__module__.startswith("google.adk.") for c in type(service).__mro__)


def event_types_for(service: object) -> EventTypes:
    """The classes the service stores; google-adk is imported only for its services."""
    return _adk_types() if is_adk_service(service) else COURSE_TYPES


def convert_content(content: Any, types: EventTypes) -> Any:
    """Copy a content's role, texts, function calls and responses into `types`' classes."""
    if content is None or isinstance(content, types.Content):
        return content
    parts = []
    for p in content.parts or []:
        if p.function_call is not None:
            fc = p.function_call
            call = types.FunctionCall(id=fc.id, name=fc.name, args=dict(fc.args or {}))
            parts.append(types.Part(function_call=call))
        elif p.function_response is not None:
            fr = p.function_response
            resp = types.FunctionResponse(id=fr.id, name=fr.name, response=dict(fr.response or {}))
            parts.append(types.Part(function_response=resp))
        elif p.text is not None:
            parts.append(types.Part(text=p.text))
    return types.Content(role=content.role, parts=parts)
