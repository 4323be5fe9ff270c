"""``BaseSessionService`` and its two small models, with ADK 2.10's API.

Every method is async with keyword-only arguments, as in ADK. The shared logic of
``append_event`` (partial events, ``temp:`` keys, argument checks) lives here; a backend only
stores.
"""

from __future__ import annotations

import abc
import asyncio
import math
import time
from typing import Any

from pydantic import BaseModel, Field, field_validator

from ..events import Event
from .errors import InvalidArgumentError
from .session import Session
from .state import State, dumps_state, split_state

__all__ = ["HAND_BACK_SECONDS", "BaseSessionService", "GetSessionConfig", "ListSessionsResponse"]


class GetSessionConfig(BaseModel):
    """Quels événements ``get_session`` renvoie.

    ``num_recent_events``\u00a0: None pour tous, n > 0 pour les n derniers, 0 pour aucun
    (négatif refusé)\u00a0; ``after_timestamp``\u00a0: seulement les événements dont
    l'horodatage est >= à lui.
    """

    num_recent_events: int | None = None
    after_timestamp: float | None = None

    @field_validator("num_recent_events")
    @classmethod
    def _not_negative(cls, value: int | None) -> int | None:
        if value is not None and value < 0:
            raise ValueError("num_recent_events doit être supérieur ou égal à 0.")
        return value


class ListSessionsResponse(BaseModel):
    """Les sessions trouvées, de la plus anciennement modifiée à la plus récente, sans
    leurs événements."""

    sessions: list[Session] = Field(default_factory=list)


def check_name(value: Any, what: str) -> str:
    """A non-empty string, or a clear French error (an empty user_id must never mean 'all')."""
    if not isinstance(value, str):
        raise InvalidArgumentError(
            f"{what} doit être une chaîne de caractères (str), pas {type(value).__name__} "
            f"({value!r})."
        )
    if not value.strip():
        raise InvalidArgumentError(f"{what} ne doit pas être vide.")
    return value


def next_update_time(event_timestamp: float, storage_time: float) -> float:
    """The session's new revision time: the event's time, but always after the stored one.

    ADK copies the event's timestamp, so an event built earlier moves it backwards and a
    racing writer can slip through the staleness check; here it only moves forward.
    """
    if event_timestamp > storage_time:
        return event_timestamp
    return math.nextafter(storage_time, math.inf)


# calls that never wait in a row before one pause of the event loop: Stop is felt within this,
# and a pause (about 20 µs) every 50 ms costs nothing measurable
HAND_BACK_SECONDS = 0.05


class BaseSessionService(abc.ABC):
    """Crée, relit, liste et supprime des sessions, et leur ajoute des événements.

    Même API que les services de google-adk 2.10\u00a0: méthodes asynchrones, arguments nommés.
    """

    _handed_back = 0.0  # when a call that never waits last let the event loop run

    async def _hand_back(self) -> None:
        """Let the event loop run, once every HAND_BACK_SECONDS: a learner's loop of calls that
        never wait (reads in place, the in-memory service) never paused, and Jupyter's Stop,
        which cancels the cell's task at its next pause, did nothing; only a restart helped."""
        if time.monotonic() - self._handed_back > HAND_BACK_SECONDS:
            await asyncio.sleep(0)
            self._handed_back = time.monotonic()

    @abc.abstractmethod
    async def create_session(
        self,
        *,
        app_name: str,
        user_id: str,
        state: dict[str, Any] | None = None,
        session_id: str | None = None,
    ) -> Session:
        """Crée une session et la renvoie.

        ``session_id`` est débarrassé de ses espaces\u00a0; vide ou None, il devient un uuid4.
        Les clés ``app:`` et ``user:`` de ``state`` vont dans l'état partagé, ``temp:`` n'est
        pas gardé. Une session qui existe déjà lève ``AlreadyExistsError``.
        """

    @abc.abstractmethod
    async def get_session(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str,
        config: GetSessionConfig | None = None,
    ) -> Session | None:
        """La session complète (état fusionné, événements dans l'ordre du temps), ou None si
        elle n'existe pas (ou appartient à un autre utilisateur)."""

    @abc.abstractmethod
    async def list_sessions(
        self, *, app_name: str, user_id: str | None = None
    ) -> ListSessionsResponse:
        """Les sessions d'un utilisateur (de tous si ``user_id`` est None), de la plus
        anciennement modifiée à la plus récente\u00a0: état fusionné, mais ``events=[]`` (un index,
        pas un rechargement)."""

    @abc.abstractmethod
    async def delete_session(self, *, app_name: str, user_id: str, session_id: str) -> None:
        """Supprime une session et ses événements. L'état ``user:`` et ``app:`` reste\u00a0!
        Une session absente n'est pas une erreur."""

    @abc.abstractmethod
    async def get_user_state(self, *, app_name: str, user_id: str) -> dict[str, Any]:
        """L'état ``user:`` de l'utilisateur, clés sans le préfixe\u00a0; ``{}`` s'il n'y en a
        pas."""

    @abc.abstractmethod
    async def list_events(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str,
        after: int = 0,
        limit: int = 100,
        offset: int = 0,
    ) -> list[Event]:
        """Une page des événements d'une session, dans l'ordre du temps.

        Positions numérotées à partir de 1\u00a0: les événements après la position ``after``, en
        sautant encore ``offset``, au plus ``limit``. Session absente\u00a0: SessionNotFoundError.
        """

    @abc.abstractmethod
    async def _store_event(self, session: Session, event: Event, event_json: str) -> float:
        """Store one event atomically (staleness check included); return the new update time."""

    async def append_event(self, session: Session, event: Event) -> Event:
        """Ajoute un événement\u00a0: l'enregistre avec son ``state_delta``, puis met ``session``
        à jour en mémoire.

        Un événement ``partial`` est renvoyé sans être enregistré\u00a0; les clés ``temp:`` ne vont
        que dans ``session.state``. Lève SessionNotFoundError, StaleSessionError (la session a
        changé ailleurs depuis sa lecture) ou DuplicateEventError, et alors rien n'est écrit.
        """
        if not isinstance(session, Session):
            raise InvalidArgumentError(
                f"session doit être une Session de course.sessions, pas {type(session).__name__}."
            )
        # An event of ADK's own classes is stored by its JSON, and, as ADK does, the very
        # object given is what the session gets and what is returned.
        given = event
        if not isinstance(event, Event):
            event = _as_course_event(event)
        if event.partial:
            return given
        delta = event.actions.state_delta or {}
        kept = {k: v for k, v in delta.items() if not k.startswith(State.TEMP_PREFIX)}
        dumps_state(kept, "Le state_delta de l'événement")
        if delta:
            event.actions.state_delta = kept
        try:
            event_json = event.model_dump_json(exclude_none=True)
        except Exception as exc:
            event.actions.state_delta = delta
            raise InvalidArgumentError(
                f"L'événement ne peut pas s'écrire en JSON\u00a0: {exc}. Rien n'a été enregistré."
            ) from None
        for key, value in delta.items():
            if key.startswith(State.TEMP_PREFIX):
                session.state[key] = value
        session.last_update_time = await self._store_event(session, event, event_json)
        self._update_session_state(session, event)
        if given is not event and delta:
            given.actions.state_delta = dict(kept)
        session.events.append(given)
        return given

    async def flush(self) -> None:
        """Rien à vider\u00a0: chaque ajout est enregistré avant de rendre la main (API d'ADK)."""
        return None

    async def close(self) -> None:
        """Libère les ressources (le service en mémoire n'en a pas)."""
        return None

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    def _update_session_state(self, session: Session, event: Event) -> None:
        if event.actions.state_delta:
            session.state.update(event.actions.state_delta)

    @staticmethod
    def _check_ids(app_name: Any, user_id: Any, session_id: Any = "-") -> None:
        check_name(app_name, "app_name")
        check_name(user_id, "user_id")
        check_name(session_id, "session_id")

    @staticmethod
    def _new_session_id(session_id: Any) -> str:
        import uuid

        if session_id is None:
            return str(uuid.uuid4())
        if not isinstance(session_id, str):
            raise InvalidArgumentError(
                "session_id doit être une chaîne de caractères (str) ou None, pas "
                f"{type(session_id).__name__} ({session_id!r})."
            )
        return session_id.strip() or str(uuid.uuid4())

    @staticmethod
    def _check_page(after: Any, limit: Any, offset: Any) -> None:
        for name, value in (("after", after), ("limit", limit), ("offset", offset)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise InvalidArgumentError(
                    f"{name} doit être un entier positif ou nul, pas {value!r}."
                )

    @staticmethod
    def _split_initial_state(state: Any) -> tuple[dict, dict, dict]:
        if state is None:
            return {}, {}, {}
        dumps_state(state, "L'état initial (state)")
        return split_state(state)


def _as_course_event(event: Any) -> Event:
    """Accept an event of another pydantic class (e.g. ADK's) by its JSON; else a clear error."""
    dump = getattr(event, "model_dump_json", None)
    if dump is None:
        raise InvalidArgumentError(
            f"event doit être un Event de course.events, pas {type(event).__name__}."
        )
    return Event.model_validate_json(dump(exclude_none=True))
