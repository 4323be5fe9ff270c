"""Why a system call failed, in French (the lessons, the tutor and the class tools share it).

An ``OSError`` carries the C library's English, and ``str(exc)`` adds ``[Errno 2]`` and the
path the sentence already names. ``french_reason``: the short French reason of a known errno,
to put inside a sentence; ``french_message``: the path(s), then that reason. Any other error
keeps its own text: nothing is hidden.
"""

from __future__ import annotations

import errno
import os
import socket
import urllib.error

__all__ = ["french_message", "french_reason"]


_REASONS_BY_NAME = {
    "ENOENT": "fichier ou dossier introuvable",
    "EACCES EPERM": "permission refusée",
    "EISDIR": "c'est un dossier, pas un fichier",
    "ENOTDIR": "un élément du chemin n'est pas un dossier",
    "ENOSPC": "disque plein",
    "EDQUOT": "quota disque dépassé",
    "EFBIG": "fichier trop grand (limite de taille, ulimit -f)",
    "EROFS": "système de fichiers en lecture seule",
    "EEXIST": "existe déjà",
    "ENOTEMPTY": "dossier non vide",
    "ENAMETOOLONG": "nom trop long",
    "ELOOP": "trop de liens symboliques",
    "EBUSY": "ressource occupée",
    "EMFILE ENFILE": "trop de fichiers ouverts",
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
    for names, reason in _REASONS_BY_NAME.items()
    for name in names.split()
    if hasattr(errno, name)
}
# a host name that does not resolve (getaddrinfo's own codes, not errno numbers)
_NAME_REASONS: dict[int, str] = {
    socket.EAI_NONAME: "nom d'hôte inconnu",
    socket.EAI_AGAIN: "résolution du nom momentanément impossible",
}


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
            return _REASONS[errno.ETIMEDOUT]
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
    """Why `exc` happened, inside a sentence that names the file: the French reason of a known
    errno, else the exception's own text (an ``OSError``'s ``strerror``)."""
    return _known_reason(exc) or _original_reason(exc)


def _path_text(path: object) -> str:
    return os.fsdecode(path) if isinstance(path, bytes) else str(path)


def french_message(exc: BaseException, named: str | os.PathLike[str] | None = None) -> str:
    """The message of `exc` on its own: for a known errno, its path(s) but `named` then the
    French reason; else ``str(exc)`` unchanged."""
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
