"""The offline tutor: a deterministic quiz model, its tools, a Runner and the demo sessions.

Importing this package does no I/O; google-adk is imported only when one of its services is
given to the Runner.
"""

from .agent import APP_NAME, Agent, Tuteur
from .demonstration import demo
from .modele import ModelRequest, ModelResponse, RuleTutorModel, TurnModel
from .runner import Runner, UnknownSessionError, message

__all__ = [
    "APP_NAME",
    "Agent",
    "ModelRequest",
    "ModelResponse",
    "Runner",
    "RuleTutorModel",
    "TurnModel",
    "Tuteur",
    "UnknownSessionError",
    "demo",
    "message",
]
