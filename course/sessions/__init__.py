"""The course's session services, with google-adk 2.10's API and SQLite file format.

``InMemorySessionService`` for tests and demos, ``SqliteSessionService`` for a file that
survives restarts. There is deliberately no one-call "erase a user" method: writing it
(``oublier``) is the students' exercise.
"""

from .base_session_service import BaseSessionService, GetSessionConfig, ListSessionsResponse
from .errors import (
    AlreadyExistsError,
    DatabaseBusyError,
    DuplicateEventError,
    InvalidArgumentError,
    InvalidDatabaseError,
    ReadOnlyDatabaseError,
    ServiceClosedError,
    SessionNotFoundError,
    StaleSessionError,
)
from .in_memory_session_service import InMemorySessionService
from .session import Session
from .sqlite_session_service import SqliteSessionService
from .state import State

__all__ = [
    "AlreadyExistsError",
    "BaseSessionService",
    "DatabaseBusyError",
    "DuplicateEventError",
    "GetSessionConfig",
    "InMemorySessionService",
    "InvalidArgumentError",
    "InvalidDatabaseError",
    "ListSessionsResponse",
    "ReadOnlyDatabaseError",
    "ServiceClosedError",
    "Session",
    "SessionNotFoundError",
    "SqliteSessionService",
    "StaleSessionError",
    "State",
]
