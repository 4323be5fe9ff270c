"""The errors a learner meets in the notebook: IPython shows their French lines only.

Each is still an exception of the kind Python would raise (an ``AssertionError`` for a failed
test), so the cell fails and nbgrader gives it 0, but the student reads what to do, not the
frames of this package.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

__all__ = [
    "CelluleModifiee",
    "EchecDuTest",
    "MauvaisArgument",
    "OublierPasEcrite",
    "PasUneFonction",
    "VerificationInterrompue",
    "interrupted_in_french",
]


class _Readable(Exception):
    """An error IPython shows as its French lines only (``_render_traceback_``)."""

    def __init__(self, message: str, lines: list[str] | None = None) -> None:
        super().__init__(message)
        self.lines = lines or [message]

    def _render_traceback_(self) -> list[str]:
        return list(self.lines)


class OublierPasEcrite(_Readable, NotImplementedError):
    """oublier still is the stub (its first call raised NotImplementedError)."""


class EchecDuTest(_Readable, AssertionError):
    """A test of the TP failed: the criterion and what is missing, in French."""


class PasUneFonction(_Readable, TypeError):
    """What was passed as oublier is not a function defined in the notebook."""


class CelluleModifiee(_Readable, RuntimeError):
    """The cell that defines the function was run again and does not compile: the function in
    memory is the older one, which grading never sees."""


class MauvaisArgument(_Readable, ValueError):
    """A helper of the course (``indice``, ``noter``…) called with what it cannot take: the
    learner reads which values it takes, not the frames of this package."""


class VerificationInterrompue(KeyboardInterrupt):
    """The learner stopped a check (the Stop button, Ctrl-C): one French line instead of forty
    frames of the course's package and of subprocess; still a KeyboardInterrupt, so a « run
    all » stops there as it would."""

    def _render_traceback_(self) -> list[str]:
        return [f"✘ {self}"]


INTERRUPTED = (
    "Vérification interrompue (bouton Stop ou Ctrl-C)\u00a0: votre fonction a été arrêtée, rien "
    "n'est gardé de cet essai. Relancez la cellule quand vous voulez."
)


@contextmanager
def interrupted_in_french() -> Iterator[None]:
    """A check's interruption said in French (the check stops its processes itself)."""
    try:
        yield
    except KeyboardInterrupt as exc:
        if isinstance(exc, VerificationInterrompue):
            raise
        raise VerificationInterrompue(INTERRUPTED) from None
