"""What a learner reads in a notebook when a cell fails: one French line instead of a traceback,
for the course's own errors (``ReadableError``: its class and message, without the frames of the
course's package) and for a cell stopped while it awaited (Jupyter's Stop button); a French line
after the traceback for a connection used once closed, for a name the kernel does not know and
for a lesson's base that is gone (a cell run again, or out of order)."""

from __future__ import annotations

import asyncio
import sqlite3
from typing import Any

from course.sql_messages import sql_in_french

__all__ = [
    "CLOSED",
    "GONE",
    "RUN_ABOVE",
    "STOPPED",
    "ReadableError",
    "errors_in_french",
    "kernel_shell",
    "missing_name",
]

# what to do when the lesson's state above a cell is not there (menu: JupyterLab's French language
# pack spells it so)
RUN_ABOVE = (
    "sélectionnez cette cellule, exécutez tout ce qui la précède (menu Executer, «\u00a0Exécuter "
    "tout au-dessus de la cellule sélectionnée\u00a0»), puis celle-ci."
)

CLOSED = (
    "En français\u00a0: cette connexion est fermée (close()). Si c'est celle de la leçon, une "
    "cellule plus bas la ferme, ou la première cellule, exécutée de nouveau, l'a fermée avec "
    f"l'ancienne base\u00a0: {RUN_ABOVE}"
)
_CLOSED_DATABASE = "Cannot operate on a closed database."  # sqlite3's words


def missing_name(name: str | None, *, typed: bool = False) -> str:
    """What to run when a cell uses a name that a cell above defines (the kernel restarted, or
    the cell run before those above it). ``typed``: the name is in the learner's own cell, where
    it may as well be misspelt (« pritn »), which running the cells above does not mend."""
    if typed:
        return (
            f"«\u00a0{name}\u00a0» n'existe pas dans ce noyau. Vérifiez son orthographe\u00a0; "
            f"s'il est défini plus haut (noyau redémarré, ou cellules au-dessus jamais "
            f"exécutées), {RUN_ABOVE}"
        )
    return (
        f"«\u00a0{name}\u00a0» n'existe pas dans ce noyau (redémarré, ou des cellules "
        f"au-dessus jamais exécutées)\u00a0: {RUN_ABOVE}"
    )


# SQLite's words when a lesson's base is gone: its last section removed it, or it is not made yet
_NO_TABLE = "no such table"  # then the table's name
_CANNOT_OPEN = "unable to open database file"
GONE = (
    "Si c'est une base de la leçon, elle a été effacée (sa dernière section range ses "
    f"fichiers) ou n'est pas encore créée\u00a0: {RUN_ABOVE}"
)


def _base_gone(message: str) -> str | None:
    """The French line for SQLite's ``message`` when a lesson's base may be gone, else None."""
    if message.startswith(_NO_TABLE):
        return f"En français\u00a0: {sql_in_french(message)}. {GONE}"
    if message == _CANNOT_OPEN:
        return f"En français\u00a0: SQLite ne peut pas ouvrir ce fichier. {GONE}"
    return None


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


_HANDLED = (asyncio.CancelledError, sqlite3.ProgrammingError, sqlite3.OperationalError, NameError)


def _in_french(shell: Any, etype: type, value: BaseException, tb: Any, tb_offset=None) -> None:
    """IPython's handler of the custom exceptions: it shows the error itself (the kernel's reply
    and « Exécuter tout » read what this shows)."""
    if isinstance(value, asyncio.CancelledError):
        shell._showtraceback(etype, value, [STOPPED])
        return
    if hasattr(value, "_render_traceback_"):  # the course's own (a ReadableError NameError)
        shell._showtraceback(etype, value, value._render_traceback_())
        return
    shown = shell.InteractiveTB.structured_traceback(etype, value, tb, tb_offset=tb_offset)
    if str(value) == _CLOSED_DATABASE:  # its line in the learner's cell, then what to do
        shown = [*shown, CLOSED]
    elif type(value) is NameError and value.name:  # Python's line names it, then what to run
        shown = [*shown, f"En français\u00a0: {missing_name(value.name, typed=True)}"]
    elif isinstance(value, sqlite3.OperationalError) and (gone := _base_gone(str(value))):
        shown = [*shown, gone]
    shell._showtraceback(etype, value, shown)


def errors_in_french() -> None:
    """Installed by the lesson's first cell. A cell stopped on an ``await`` (Stop cancels its
    task) says so in one French line: it showed asyncio's CancelledError traceback, through the
    session service's frames, in English. A connection used once closed (the lesson's, closed
    by a later cell, or by its first cell run again), a name no cell above has defined yet (a
    cell run before them) and a base the lesson's last section removed say what to run. Every
    such cell still ends in error: « Exécuter tout » stops there as before."""
    shell = kernel_shell()
    if shell is not None and getattr(shell, "custom_exceptions", ()) in (
        (),
        (asyncio.CancelledError,),
        _HANDLED,
    ):
        shell.set_custom_exc(_HANDLED, _in_french)
