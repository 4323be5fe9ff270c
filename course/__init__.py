"""Cours : la mémoire d'un tuteur IA entre sessions, avec SQLite.

Importing the package does no I/O and no network; each sub-package is imported on demand.
"""

__all__ = ["__version__"]

__version__ = "0.1.0"
