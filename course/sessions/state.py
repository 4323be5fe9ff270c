"""``State``: the three state scopes and how keys are split and merged, as in ADK.

Keys ``app:X`` live in ``app_states`` (shared by every user of the app), ``user:X`` in
``user_states`` (shared by every session of a user), ``temp:X`` are never stored; other keys
belong to the session. Stored keys lose their prefix; reading merges them back.
"""

from __future__ import annotations

import json
from typing import Any

from .errors import InvalidArgumentError

__all__ = ["State", "dumps_state", "merge_state", "prefixed", "split_state"]


class State:
    """Scope prefixes, with ADK's names."""

    APP_PREFIX = "app:"
    USER_PREFIX = "user:"
    TEMP_PREFIX = "temp:"


def split_state(state: dict[str, Any] | None) -> tuple[dict[str, Any], dict[str, Any], dict]:
    """Split a state (or state delta) into (app, user, session) parts; ``temp:`` keys dropped."""
    app: dict[str, Any] = {}
    user: dict[str, Any] = {}
    session: dict[str, Any] = {}
    for key, value in (state or {}).items():
        if key.startswith(State.APP_PREFIX):
            app[key.removeprefix(State.APP_PREFIX)] = value
        elif key.startswith(State.USER_PREFIX):
            user[key.removeprefix(State.USER_PREFIX)] = value
        elif not key.startswith(State.TEMP_PREFIX):
            session[key] = value
    return app, user, session


def prefixed(state: dict[str, Any], prefix: str) -> dict[str, Any]:
    """``state`` with ``prefix`` put back in front of every key (as read into session.state)."""
    return {prefix + key: value for key, value in state.items()}


def merge_state(
    app_state: dict[str, Any], user_state: dict[str, Any], session_state: dict[str, Any]
) -> dict[str, Any]:
    """Session keys first, then ``app:`` keys, then ``user:`` keys (ADK's order)."""
    return {
        **session_state,
        **prefixed(app_state, State.APP_PREFIX),
        **prefixed(user_state, State.USER_PREFIX),
    }


def dumps_state(state: dict[str, Any], what: str = "L'état") -> str:
    """Serialise a state dict as stored in the file (compact JSON, ASCII, like ADK's merges).

    Raises InvalidArgumentError (French) instead of silently storing ``repr()`` as ADK does.
    """
    if not isinstance(state, dict):
        raise InvalidArgumentError(
            f"{what} doit être un dictionnaire (dict), pas {type(state).__name__}."
        )
    for key in state:
        if not isinstance(key, str):
            raise InvalidArgumentError(
                f"{what} n'accepte que des clés texte (str)\u00a0; clé refusée\u00a0: {key!r}."
            )
    try:
        return json.dumps(state, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InvalidArgumentError(
            f"{what} doit pouvoir s'écrire en JSON (texte, nombres, booléens, None, listes, "
            f"dictionnaires)\u00a0: {exc}. Rien n'a été enregistré."
        ) from None
