"""What a learner reads in a notebook when a cell fails: one French line instead of a traceback,
for the course's own errors (``ReadableError``: its class and message, without the frames of the
course's package) and for a cell stopped while it awaited (Jupyter's Stop button)."""

from __future__ import annotations

import asyncio
from typing import Any

__all__ = ["STOPPED", "ReadableError", "kernel_shell", "stop_in_french"]

STOPPED = (
    "CancelledError\u00a0: l'attente de la cellule a été annulée. C'est ce que fait le bouton "
    "■ (Interrompre le noyau) à une cellule arrêtée sur un await\u00a0; le noyau et ses "
    "variables restent là, relancez la cellule quand vous voulez."
)


class ReadableError(Exception):
    """Mixed in first (``class X(ReadableError, PermissionError)``): X stays the error Python
    would raise, only its display changes."""

    def _render_traceback_(self) -> list[str]:
        """IPython shows this instead of a traceback."""
        return [f"{type(self).__name__}\u00a0: {self}"]


def kernel_shell() -> Any:
    """The notebook kernel's IPython shell; None outside one (a script, the tests)."""
    try:
        from IPython import get_ipython  # only in a notebook's kernel
    except ImportError:
        return None
    return get_ipython()


def _stopped(shell: Any, etype: type, value: BaseException, _tb: Any, tb_offset=None) -> None:
    """IPython's handler of a custom exception: it shows the error itself (the kernel's reply
    and « Exécuter tout » read what this shows)."""
    shell._showtraceback(etype, value, [STOPPED])


def stop_in_french() -> None:
    """A cell stopped on an ``await`` (Stop cancels its task) says so in one French line: it
    showed asyncio's CancelledError traceback, through the session service's frames, in
    English. The cell still ends in error: « Exécuter tout » stops there as before."""
    shell = kernel_shell()
    if shell is not None and getattr(shell, "custom_exceptions", ()) in (
        (),
        (asyncio.CancelledError,),
    ):
        shell.set_custom_exc((asyncio.CancelledError,), _stopped)
