"""The offline tutor: a deterministic quiz model, its tools, a Runner and the demo sessions.

The lessons call ``Tuteur``, ``demo`` and ``message`` (the learner's API, in French) next to
``Agent`` and ``Runner`` (ADK's names). Importing this package does no I/O; google-adk is
imported only when one of its services is given to the Runner.
"""

from .agent import APP_NAME, Agent, Tuteur
from .demo_sessions import demo
from .model import ModelRequest, ModelResponse, RuleTutorModel, TurnModel
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
