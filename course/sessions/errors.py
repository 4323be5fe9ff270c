"""Errors of the course's session services.

The three ADK errors keep ADK's names and bases (``AlreadyExistsError`` is not a ValueError in
ADK, the two others are). The course adds errors for bad input and bad files; each is a
``ValueError`` so that code written for ADK, which catches ValueError, still catches them.
Messages are in French: learners read them.
"""

from __future__ import annotations

import sqlite3

__all__ = [
    "AlreadyExistsError",
    "DatabaseBusyError",
    "DuplicateEventError",
    "InvalidArgumentError",
    "InvalidDatabaseError",
    "ReadOnlyDatabaseError",
    "ServiceClosedError",
    "SessionNotFoundError",
    "StaleSessionError",
]


class AlreadyExistsError(Exception):
    """A session with this (app_name, user_id, id) already exists (ADK: not a ValueError)."""

    def __init__(self, message: str = "La ressource existe déjà."):
        self.message = message
        super().__init__(message)


class SessionNotFoundError(ValueError):
    """The session given to ``append_event`` (or ``list_events``) is not in storage."""

    def __init__(self, message: str = "Session introuvable.") -> None:
        super().__init__(message)


class StaleSessionError(ValueError):
    """Storage was updated after this session object was read: reload it with get_session."""


class InvalidArgumentError(ValueError, TypeError):
    """An argument has the wrong type or value (empty name, state that is not JSON...)."""


class DuplicateEventError(ValueError, sqlite3.IntegrityError):
    """The same event (same id) was appended twice to one session.

    Also an ``sqlite3.IntegrityError``, which is what ADK's SQLite service raises here.
    """


class InvalidDatabaseError(ValueError, RuntimeError):
    """The database file cannot be used: missing folder, not SQLite, wrong tables.

    Also a ``RuntimeError``, which is what ADK's SQLite service raises for an unreadable file.
    """


class ReadOnlyDatabaseError(InvalidDatabaseError):
    """The file is read-only: reading works, writing is refused before anything changes."""


class DatabaseBusyError(RuntimeError):
    """Another program held the write lock for too long (after waiting and retrying)."""


class ServiceClosedError(RuntimeError):
    """The service was closed with ``close()``: create a new one to keep working."""
