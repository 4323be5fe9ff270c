"""The check cell of a lesson's exercise: a miss said in one French line, with the hint that
climbs its ladder, instead of a traceback through the check's ``assert`` lines or SQLite's
English (« no such table: user_state »). The learner's own error (a TypeError in their
function) keeps its traceback: it points into their code, where the fix is."""

from __future__ import annotations

import re
import sqlite3
import warnings
from collections.abc import Iterator
from contextlib import contextmanager

from course.hints import LADDERS, S_ASYNC, set_tp_cause
from course.readable_error import RUN_ABOVE, ReadableError, missing_name
from course.sessions.errors import ServiceClosedError
from course.sql_messages import sql_in_french

__all__ = ["ExerciceNonReussi", "sqlite_en_francais", "verification"]


class ExerciceNonReussi(ReadableError, AssertionError):
    """A check of an exercise that fails: still an AssertionError, shown as its French lines."""


def sqlite_en_francais(erreur: Exception) -> str:
    """Ce que SQLite (ou PostgreSQL) a répondu, en français quand la phrase est connue."""
    message = str(erreur)
    postgres = type(erreur).__module__.startswith("asyncpg")
    if (french := sql_in_french(message, postgres)) is not None:
        return french
    return f"{'PostgreSQL' if postgres else 'SQLite'} a répondu «\u00a0{message}\u00a0»"


# Python's words for a service method called with positional or missing arguments (every
# argument of ADK's session services is keyword-only)
_KEYWORDS_ONLY = re.compile(
    r"takes \d+ positional arguments{0,1} but \d+ (?:were|was) given"
    r"|missing \d+ required keyword-only arguments{0,1}"
)


# Python's words for awaiting what is not awaitable (3.14: « 'NoneType' object can't be
# awaited »): in the check's own line, the learner's function was written without async def
_NOT_AWAITABLE = re.compile(r"can't be (?:used in 'await' expression|awaited)")


def _in_the_check(exc: BaseException) -> bool:
    """Raised by the check cell's own line (one frame, the cell's, besides this context
    manager's): what the learner's function gave back does not fit there."""
    frames, tb = [], exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code is not verification.__wrapped__.__code__:
            frames.append(tb)
        tb = tb.tb_next
    return len(frames) == 1


@contextmanager
def verification(exercice: str) -> Iterator[None]:
    """La cellule de vérification d'un exercice\u00a0: un échec dit en une ligne, en français,
    avec l'indice à demander (``indice(1, "<exercice>")``)."""
    hint = (
        f"\nBloqué\u00a0? indice(1, {exercice!r}), puis indice(2, {exercice!r}) et "
        f"indice(3, {exercice!r})."
        if exercice in LADDERS
        else ""
    )
    failed: BaseException | None = None
    with warnings.catch_warnings(record=True) as warned:
        warnings.simplefilter("always")
        try:
            yield
        except BaseException as exc:  # said below, once the warnings are shown again
            failed = exc
    # outside catch_warnings: shown again inside it, each warning was recorded once more, and
    # the loop over them never ended (a DeprecationWarning of a right answer hung the kernel)
    _reissue(warned)
    unawaited = _unawaited(warned)
    if failed is None:
        if unawaited:
            print(f"⚠ {unawaited}")
        return
    if exercice in LADDERS:
        set_tp_cause(exercice)  # indice() without a name: this exercise's ladder
    french = _in_french(failed, exercice, hint) if isinstance(failed, Exception) else None
    if french is None:
        if unawaited and isinstance(failed, Exception):
            failed.add_note(unawaited)
        raise failed
    # the call without await first: what the check then missed follows from it
    raise ExerciceNonReussi(f"{unawaited}\n{french}" if unawaited else french) from None


def _in_french(exc: Exception, exercice: str, hint: str) -> str | None:
    """What the check says of `exc` in French, or None: the learner's own bug keeps its
    traceback (it points into their code), with a French note when its cause is known."""
    if isinstance(exc, ExerciceNonReussi):
        return str(exc)
    if isinstance(exc, NotImplementedError):
        return (
            f"l'exercice {exercice} n'est pas encore écrit\u00a0: complétez sa cellule (à la "
            f"place de raise NotImplementedError), exécutez-la, puis celle-ci.{hint}"
        )
    if isinstance(exc, AssertionError):
        return f"{str(exc) or 'une vérification a échoué'}{hint}"
    if isinstance(exc, ServiceClosedError) or (
        isinstance(exc, sqlite3.ProgrammingError) and "closed database" in str(exc)
    ):  # the check run again once the lesson's last cells closed it
        return (  # reopening it alone checks a base the later cells changed: run what precedes
            "la connexion de la leçon est fermée (une cellule plus bas la ferme, après avoir "
            f"changé la base)\u00a0: {RUN_ABOVE}"
        )
    if isinstance(exc, NameError) and _in_the_check(exc):  # a restarted kernel, cells skipped
        return missing_name(exc.name)
    if isinstance(exc, sqlite3.Error) or type(exc).__module__.startswith("asyncpg"):
        return f"votre requête est refusée\u00a0: {sqlite_en_francais(exc)}.{hint}"
    if not isinstance(exc, (TypeError, AttributeError)):
        return None
    if not _in_the_check(exc):
        if "'coroutine' object" in str(exc):
            exc.add_note(
                "En français\u00a0: un appel du service sans await renvoie une coroutine, pas "
                "son résultat. Ajoutez await devant l'appel de la ligne indiquée."
            )
        elif _KEYWORDS_ONLY.search(str(exc)):
            exc.add_note(
                "En français\u00a0: les méthodes du service se donnent par noms, comme dans "
                "ADK (app_name=..., user_id=..., session_id=...)\u00a0: nommez chaque argument "
                "de l'appel de la ligne indiquée, sans en oublier."
            )
        return None
    if isinstance(exc, TypeError) and _NOT_AWAITABLE.search(str(exc)):
        return (
            "votre fonction n'est pas asynchrone\u00a0: la vérification l'appelle avec await, "
            f"définissez-la avec async def. Où regarder\u00a0: {S_ASYNC.text().replace('`', '')}."
            f"{hint}"
        )
    return (
        "ce que renvoie votre fonction ne convient pas à la vérification "
        f"({type(exc).__name__}\u00a0: {exc})\u00a0: relisez ce que l'énoncé demande de "
        f"renvoyer (un return oublié\u00a0? un await\u00a0? async def\u00a0?).{hint}"
    )


def _unawaited(warned: list[warnings.WarningMessage]) -> str:
    """A coroutine left without await during the check, in French ("" if none): Python's
    « coroutine 'sql' was never awaited » came in English, and the check then failed on what
    that call should have done."""
    if not warned:
        return ""
    # course.labo (its checks, the grader's modules) only when the check caught a warning
    from course.labo.left_behind import never_awaited

    # « coroutine 'f.<locals>.sql' was never awaited »: the name she wrote, sql
    names = [str(w.message).split("'")[1].rsplit(".", 1)[-1] for w in warned if never_awaited(w)]
    if not names:
        return ""
    return (
        f"un appel sans await\u00a0: {', '.join(dict.fromkeys(names))}() a été appelée sans "
        "être attendue, elle n'a rien fait (ajoutez await devant)."
    )


def _reissue(warned: list[warnings.WarningMessage]) -> None:
    """Show again the other warnings the check caught, as they came."""
    if not warned:
        return
    from course.labo.left_behind import never_awaited  # as in _unawaited

    for w in warned:
        if not never_awaited(w):
            warnings.showwarning(w.message, w.category, w.filename, w.lineno, w.file, w.line)
