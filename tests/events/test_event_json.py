"""course.events writes the same JSON as ADK: what is stored in ``events.event_data``."""

from __future__ import annotations

import json

import pytest
from google.adk.events import Event as AdkEvent
from google.adk.events import EventActions as AdkEventActions
from google.genai import types

from course.events import Content, Event, EventActions, FunctionCall, FunctionResponse, Part


def pair(**fields):
    """The same event built with the course's classes and with ADK's."""
    content = fields.pop("content", None)
    delta = fields.pop("state_delta", {})
    course_content = adk_content = None
    if content is not None:
        role, kind, value = content
        if kind == "text":
            course_part, adk_part = Part(text=value), types.Part(text=value)
        elif kind == "call":
            course_part = Part(function_call=FunctionCall(**value))
            adk_part = types.Part(function_call=types.FunctionCall(**value))
        else:
            course_part = Part(function_response=FunctionResponse(**value))
            adk_part = types.Part(function_response=types.FunctionResponse(**value))
        course_content = Content(role=role, parts=[course_part])
        adk_content = types.Content(role=role, parts=[adk_part])
    course = Event(content=course_content, actions=EventActions(state_delta=dict(delta)), **fields)
    adk = AdkEvent(
        content=adk_content,
        actions=AdkEventActions(state_delta=dict(delta)),
        id=course.id,
        timestamp=course.timestamp,
        **fields,
    )
    return course, adk


CASES = {
    "user-text": dict(author="user", invocation_id="i1", content=("user", "text", "Bonjour")),
    "tutor-text-unicode": dict(
        author="tuteur", invocation_id="i1", content=("model", "text", "Très bien, « été » ✓")
    ),
    "function-call": dict(
        author="tuteur",
        invocation_id="i2",
        content=("model", "call", {"id": "c1", "name": "noter", "args": {"juste": False}}),
    ),
    "function-response": dict(
        author="tuteur",
        invocation_id="i2",
        content=("user", "response", {"id": "c1", "name": "noter", "response": {"ok": True}}),
    ),
    "state-delta": dict(
        author="tuteur",
        invocation_id="i3",
        content=("model", "text", "ok"),
        state_delta={"user:progression": {"python": {"niveau": 4, "a_revoir": ["décorateurs"]}}},
    ),
    "flags": dict(
        author="tuteur",
        invocation_id="i4",
        partial=False,
        turn_complete=True,
        branch="tuteur.quiz",
        error_code="E1",
        error_message="oups",
        custom_metadata={"k": [1, 2]},
        long_running_tool_ids={"b", "a"},
    ),
    "empty": dict(author="user", invocation_id=""),
}


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_course_event_json_equals_adk_event_json(case):
    course, adk = pair(**dict(CASES[case]))
    assert course.model_dump_json(exclude_none=True) == adk.model_dump_json(exclude_none=True)


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_adk_json_reads_back_unchanged(case):
    _, adk = pair(**dict(CASES[case]))
    stored = adk.model_dump_json(exclude_none=True)
    assert Event.model_validate_json(stored).model_dump_json(exclude_none=True) == stored
    assert AdkEvent.model_validate_json(
        Event.model_validate_json(stored).model_dump_json(exclude_none=True)
    ) == AdkEvent.model_validate_json(stored)


def test_fields_the_course_does_not_model_survive_a_round_trip():
    adk = AdkEvent(
        author="tuteur",
        invocation_id="i",
        content=types.Content(role="model", parts=[types.Part(text="x")]),
        usage_metadata=types.GenerateContentResponseUsageMetadata(prompt_token_count=12),
        finish_reason=types.FinishReason.STOP,
    )
    stored = adk.model_dump_json(exclude_none=True)
    data = json.loads(stored)
    data["champ_futur"] = {"a": 1}
    course = Event.model_validate(data)
    assert json.loads(course.model_dump_json(exclude_none=True)) == data


def test_ids_and_timestamps_are_generated_like_adk():
    first, second = Event(author="user"), Event(author="user")
    assert first.id != second.id and len(first.id) == 36
    assert abs(first.timestamp - AdkEvent(author="user").timestamp) < 5
    assert json.loads(first.model_dump_json(exclude_none=True))["node_info"] == {"path": ""}


def test_camel_case_aliases_are_accepted_and_dump_is_snake_case():
    event = Event.model_validate(
        {"author": "user", "invocationId": "i9", "actions": {"stateDelta": {"a": 1}}}
    )
    dumped = json.loads(event.model_dump_json(exclude_none=True))
    assert dumped["invocation_id"] == "i9" and dumped["actions"]["state_delta"] == {"a": 1}
