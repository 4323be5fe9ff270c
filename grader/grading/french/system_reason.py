"""Why a system call failed, said in French, for the class tools' messages.

The class tools speak French, but an ``OSError`` carries the C library's English
(``No such file or directory``), and ``str(exc)`` adds ``[Errno 2]`` and the path that the
French sentence already names. ``french_reason`` gives the short French reason of a known
errno (lower-case, no final period, no path), to put inside a sentence; ``french_message``
gives the whole message of an error shown on its own: its path(s), then that reason. Any
other error (an unknown errno, an exception that is not a system one, an ``OSError`` the
tools raise with a French sentence of their own) keeps its original text: nothing is hidden.
"""

from __future__ import annotations

import errno
import os
import socket
import urllib.error

__all__ = ["french_message", "french_reason"]

_REASONS_BY_NAME = {
    "ENOENT": "fichier ou dossier introuvable",
    "EACCES": "permission refusée",
    "EPERM": "permission refusée",
    "EISDIR": "c'est un dossier, pas un fichier",
    "ENOTDIR": "un élément du chemin n'est pas un dossier",
    "ENOSPC": "disque plein",
    "EDQUOT": "quota disque dépassé",
    "EROFS": "système de fichiers en lecture seule",
    "EEXIST": "existe déjà",
    "ENOTEMPTY": "dossier non vide",
    "ENAMETOOLONG": "nom trop long",
    "ELOOP": "trop de liens symboliques",
    "EBUSY": "ressource occupée",
    "EMFILE": "trop de fichiers ouverts",
    "ENFILE": "trop de fichiers ouverts",
    "EIO": "erreur d'entrée-sortie",
    "EXDEV": "déplacement entre deux systèmes de fichiers impossible",
    "ECONNREFUSED": "connexion refusée",
    "ECONNRESET": "connexion interrompue",
    "ETIMEDOUT": "délai dépassé",
    "EHOSTUNREACH": "hôte injoignable",
    "ENETUNREACH": "réseau injoignable",
}
# by number; a name this platform lacks (EDQUOT elsewhere than Linux) is left out
_REASONS: dict[int, str] = {
    getattr(errno, name): reason
    for name, reason in _REASONS_BY_NAME.items()
    if hasattr(errno, name)
}
# a host name that does not resolve (getaddrinfo's own codes, not errno numbers)
_NAME_REASONS: dict[int, str] = {
    socket.EAI_NONAME: "nom d'hôte inconnu",
    socket.EAI_AGAIN: "résolution du nom momentanément impossible",
}
_TIMED_OUT = "délai dépassé"


def _known_reason(exc: BaseException) -> str | None:
    """The French reason of a system error this module knows, else None."""
    if isinstance(exc, urllib.error.HTTPError):
        return None  # an answer of the server, not a system error
    if isinstance(exc, urllib.error.URLError):
        # urlopen wraps the socket's error: the reason is in it
        return _known_reason(exc.reason) if isinstance(exc.reason, BaseException) else None
    if not isinstance(exc, OSError) or exc.errno is None:
        # a socket's time-out (socket.timeout is TimeoutError) carries no errno
        if isinstance(exc, TimeoutError) and exc.args == ("timed out",):
            return _TIMED_OUT
        return None
    if isinstance(exc, socket.gaierror):
        return _NAME_REASONS.get(exc.errno)
    return _REASONS.get(exc.errno)


def _original_reason(exc: BaseException) -> str:
    """The exception's own text, without the path an ``OSError`` appends to it."""
    if isinstance(exc, urllib.error.URLError) and not isinstance(exc, urllib.error.HTTPError):
        reason = exc.reason
        return _original_reason(reason) if isinstance(reason, BaseException) else str(reason)
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return str(exc) or type(exc).__name__


def french_reason(exc: BaseException) -> str:
    """Why `exc` happened, to put inside a French sentence that already names the file: a
    short French reason for a known errno, else the exception's own text (its ``strerror``
    for an ``OSError``)."""
    return _known_reason(exc) or _original_reason(exc)


def _path_text(path: object) -> str:
    return os.fsdecode(path) if isinstance(path, bytes) else str(path)


def french_message(exc: BaseException, named: str | os.PathLike[str] | None = None) -> str:
    """The message of `exc` shown on its own: for a known errno, the path(s) it names (those
    other than `named`, which the sentence around already gives) then the French reason;
    else ``str(exc)`` unchanged (an ``OSError`` the tools raise with a French sentence)."""
    reason = _known_reason(exc)
    if reason is None:
        return str(exc) or type(exc).__name__
    skip = None if named is None else _path_text(named)
    paths = [
        _path_text(p)
        for p in (getattr(exc, "filename", None), getattr(exc, "filename2", None))
        if p is not None and _path_text(p) != skip
    ]
    return f"{' → '.join(paths)}\u00a0: {reason}" if paths else reason
