"""Errors of the course's session services.

The three ADK errors keep ADK's names and bases (``AlreadyExistsError`` is not a ValueError in
ADK, the two others are). The course adds errors for bad input and bad files; each is a
``ValueError`` so that code written for ADK, which catches ValueError, still catches them.
Messages are in French: learners read them.
"""

from __future__ import annotations

import sqlite3

from course.readable_error import ReadableError

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
    """Une session (app_name, user_id, id) existe déjà (comme dans ADK, pas une ValueError)."""

    def __init__(self, message: str = "La ressource existe déjà."):
        self.message = message
        super().__init__(message)


class SessionNotFoundError(ValueError):
    """La session passée à ``append_event`` (ou ``list_events``) n'est pas enregistrée."""

    def __init__(self, message: str = "Session introuvable.") -> None:
        super().__init__(message)


class StaleSessionError(ValueError):
    """La session a changé après sa lecture\u00a0: relisez-la avec get_session."""


class InvalidArgumentError(ValueError, TypeError):
    """Un argument a un mauvais type ou une mauvaise valeur (nom vide, état non JSON…)."""


class DuplicateEventError(ValueError, sqlite3.IntegrityError):
    """Le même événement (même id) ajouté deux fois à une session.

    C'est aussi une ``sqlite3.IntegrityError``, ce que lève le service SQLite d'ADK.
    """


class InvalidDatabaseError(ValueError, RuntimeError):
    """Fichier de base inutilisable\u00a0: dossier absent, pas du SQLite, tables différentes.

    C'est aussi une ``RuntimeError``, ce que lève ADK pour un fichier illisible.
    """


class ReadOnlyDatabaseError(InvalidDatabaseError):
    """Fichier en lecture seule\u00a0: on lit, l'écriture est refusée avant tout changement."""


class DatabaseBusyError(RuntimeError):
    """Un autre programme a gardé le verrou d'écriture trop longtemps (après attente)."""


class ServiceClosedError(ReadableError, RuntimeError):
    """Le service a été fermé avec ``close()``\u00a0: créez-en un nouveau pour continuer.

    Shown as its one French line in a notebook (a lesson's earlier cell run again after the cell
    that closes the service showed forty lines of the course's frames)."""
