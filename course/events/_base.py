"""Pydantic configuration shared by the event models.

ADK and google.genai accept camelCase aliases and snake_case names, and dump snake_case;
unknown fields are kept (``extra="allow"``) so an event written by a newer ADK survives a
read-and-rewrite through the course's service without losing data. A field also takes ADK's or
google.genai's own object (``from_attributes``): ``Part(inline_data=types.Blob(...))`` works.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, alias_generators, model_validator

__all__ = ["EventModel", "Record"]


class EventModel(BaseModel):
    """Base of every event model: ADK's aliasing, bytes as base64, unknown fields kept."""

    model_config = ConfigDict(
        extra="allow",
        alias_generator=alias_generators.to_camel,
        populate_by_name=True,
        from_attributes=True,
        ser_json_bytes="base64",
        val_json_bytes="base64",
    )

    def __eq__(self, other: object) -> bool:
        # The same message held by ADK's or google.genai's own classes is equal, as ADK's
        # services compare what they return with what was given (field for field, as JSON).
        if isinstance(other, BaseModel) and not isinstance(other, EventModel):
            mine = self.model_dump(mode="json", exclude_none=True)
            return mine == other.model_dump(mode="json", exclude_none=True)
        return super().__eq__(other)

    __hash__ = None  # type: ignore[assignment]  # mutable, as pydantic's models

    def __repr_args__(self) -> Any:
        # Only the fields that say something: a learner printing an event sees a short line.
        for name, value in super().__repr_args__():
            if value is not None and value != {}:
                yield name, value


class Record(EventModel):
    """Un objet de google.genai que le cours garde tel quel\u00a0: ses champs se lisent comme
    des attributs (``event.citation_metadata.citations[0].uri``), comme avec ADK."""

    @model_validator(mode="before")
    @classmethod
    def _objects_inside(cls, data: Any) -> Any:
        # A google.genai object is read by its fields; a mapping inside it is an object too
        # (these genai types hold no plain dicts), except in the fields a subclass declares.
        if isinstance(data, BaseModel):
            data = data.model_dump(exclude_none=True)
        if isinstance(data, dict):
            return {k: v if k in cls.model_fields else _as_records(v) for k, v in data.items()}
        return data


def _as_records(value: Any) -> Any:
    if isinstance(value, dict | BaseModel):
        return Record.model_validate(value)
    if isinstance(value, list):
        return [_as_records(v) for v in value]
    return value
