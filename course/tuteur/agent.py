"""The agent: a name, a turn model and its tools (what ADK calls an LlmAgent, minus the LLM)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, MutableMapping
from dataclasses import dataclass, field
from typing import Any

from ..app import APP_NAME
from .model import RuleTutorModel, TurnModel
from .tools import enregistrer_reponse, fixer_niveau

__all__ = ["APP_NAME", "Agent", "Tuteur", "ToolContext", "DeltaState"]

Tool = Callable[..., dict[str, Any]]


class DeltaState(MutableMapping[str, Any]):
    """Session state seen by a tool: reads fall through to the session, writes go to `delta`.

    The runner turns `delta` into the tool response event's `state_delta`, as ADK does.
    """

    def __init__(self, base: Mapping[str, Any]) -> None:
        self._base = base
        self.delta: dict[str, Any] = {}

    def __getitem__(self, key: str) -> Any:
        if key in self.delta:
            return self.delta[key]
        return self._base[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.delta[key] = value

    def __delitem__(self, key: str) -> None:
        raise TypeError("l'état d'une session ne se supprime pas : écrire None à la place")

    def __iter__(self) -> Iterator[str]:
        yield from self.delta
        yield from (k for k in self._base if k not in self.delta)

    def __len__(self) -> int:
        return len(set(self._base) | set(self.delta))


@dataclass
class ToolContext:
    """What a tool receives besides its arguments (ADK's ToolContext, reduced to the state)."""

    state: DeltaState
    user_id: str
    session_id: str


@dataclass
class Agent:
    """A named agent: its model decides, its tools act on the state."""

    name: str
    model: TurnModel
    tools: dict[str, Tool] = field(default_factory=dict)
    description: str = ""

    def tool_descriptions(self) -> dict[str, str]:
        """Tool name -> its docstring, what an LLM client would send as declarations."""
        return {name: (fn.__doc__ or "").strip() for name, fn in self.tools.items()}


class Tuteur(Agent):
    """Le tuteur du cours : un modèle à règles fixes et ses deux outils de progression
    (``fixer_niveau``, ``enregistrer_reponse``), à donner à un ``Runner``."""

    def __init__(self, model: TurnModel | None = None) -> None:
        super().__init__(
            name=APP_NAME,
            model=model if model is not None else RuleTutorModel(),
            tools={"fixer_niveau": fixer_niveau, "enregistrer_reponse": enregistrer_reponse},
            description="Tuteur de Python : pose des questions par niveau et suit la progression.",
        )
