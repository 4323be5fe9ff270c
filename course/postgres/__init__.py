"""Un PostgreSQL privé, démarré par le cours lui-même, sans root ni réseau.

``ServeurPostgres(dossier)`` : un cluster dans un dossier à vous, joignable par une socket Unix
de ce dossier, arrêté à la fin (``with``/``async with``, ``arreter()``) et avec le noyau.
Importing this package does no I/O (the server module is loaded on first use).
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "ClusterOccupe",
    "PostgresIndisponible",
    "ServeurArrete",
    "ServeurPostgres",
    "binaires_postgres",
    "dossier_cluster",
    "passer_sans_postgres",
    "serveur_disponible",
]


def __getattr__(name: str) -> Any:
    if name in ("passer_sans_postgres", "serveur_disponible"):
        from course.postgres import _absence

        return getattr(_absence, name)
    if name in __all__:
        from course.postgres import _server

        return getattr(_server, name)
    raise AttributeError(name)
