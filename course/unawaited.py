"""A call written without ``await`` in a lesson's cell, said in French in the cell that made it.

Without ``await``, a service call gives a coroutine that never runs, and nothing fails: Python
only warns, in English, when the coroutine is freed, often in a later cell (« RuntimeWarning:
coroutine '...' was never awaited », then a line about tracemalloc). In a lesson's kernel the
cell that made the coroutine says it at once, with the call's name: its result shown, a name it
bound, an error it raised using the coroutine as a result, or the call's coroutine dropped.
"""

from __future__ import annotations

import inspect
import re
import sys
import types
import warnings
import weakref
from collections import Counter
from typing import Any

from course.readable_error import kernel_shell

__all__ = ["DROPPED", "SHOWN", "STORED", "USED", "say_unawaited"]

DROPPED = (
    "⚠ L'appel à {call} n'a pas tourné\u00a0: écrit sans await, il donne une coroutine, jetée "
    "sans avoir tourné. Ajoutez await devant l'appel, puis relancez la cellule."
)
SHOWN = (
    "⚠ Une coroutine, pas le résultat de {call}\u00a0: écrit sans await, l'appel n'a pas "
    "tourné. Ajoutez await devant l'appel, puis relancez la cellule."
)
STORED = (
    "⚠ {name} contient une coroutine, pas le résultat de {call}\u00a0: écrit sans await, "
    "l'appel n'a pas tourné. Écrivez {name} = await suivi de l'appel, puis relancez la cellule."
)
USED = (
    "⚠ Cette valeur est une coroutine, pas un résultat\u00a0: un appel écrit sans await n'a "
    "pas tourné. Ajoutez await devant l'appel, puis relancez la cellule."
)

_NEVER_AWAITED = re.compile(r"coroutine '([^']+)' was never awaited")
_told: Counter[str] = Counter()  # coroutines already named, freed: Python's warning is skipped
_watched: set[weakref.ref] = set()  # the references whose callback counts them in _told
_KERNEL_NAMES = {"In", "Out", "exit", "quit", "get_ipython"}
_said = [False]  # whether this cell said a hint already: one per cell is enough


def _call(qualname: str) -> str:
    """The called function's name, as the learner wrote it after the dot."""
    return qualname.rsplit(".", 1)[-1]


def _freed(ref: weakref.ref, qualname: str) -> None:
    # called as the coroutine is freed, just before Python warns about it
    _watched.discard(ref)
    _told[qualname] += 1


def _watch(coroutine: Any) -> None:
    """Said once: no English warning later, when the coroutine is freed in some other cell."""
    qualname = coroutine.__qualname__
    _watched.add(weakref.ref(coroutine, lambda ref: _freed(ref, qualname)))


def _is_told(coroutine: Any) -> bool:
    return any(ref() is coroutine for ref in _watched)


def _waiting(value: Any) -> bool:
    return (
        inspect.iscoroutine(value)
        and inspect.getcoroutinestate(value) == inspect.CORO_CREATED
        and not _is_told(value)
    )


def _shown(coroutine: Any, printer: Any, _cycle: bool) -> None:
    """IPython's text for a coroutine a cell shows (its last line): the hint, not its repr."""
    if inspect.getcoroutinestate(coroutine) == inspect.CORO_CREATED:
        printer.text(SHOWN.format(call=_call(coroutine.__qualname__)))
        if not _is_told(coroutine):
            _watch(coroutine)
    else:
        printer.text(f"<coroutine {_call(coroutine.__qualname__)}>")


def _after_cell(result: Any) -> None:
    """IPython's post_run_cell: the names the cell bound to a coroutine never run, or its error
    from using one as a result."""
    shell = kernel_shell()
    names = shell.user_ns if shell is not None else {}
    stored = False
    for name, value in list(names.items()):
        if name.startswith("_") or name in _KERNEL_NAMES or not _waiting(value):
            continue
        print(STORED.format(name=name, call=_call(value.__qualname__)), file=sys.stderr)
        _watch(value)
        stored = True
    error = getattr(result, "error_in_exec", None)
    # « 'coroutine' object has no attribute », « object of type 'coroutine' has no len() »
    used = isinstance(error, (AttributeError, TypeError)) and "'coroutine'" in str(error)
    if used and not stored and not _said[0]:  # the call, named just before, said it already
        print(USED, file=sys.stderr)
    _said[0] = False


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """Python's « never awaited » warning said in French (or not at all when the cell that made
    the coroutine said it already); every other warning as before."""
    found = _NEVER_AWAITED.search(str(message)) if category is RuntimeWarning else None
    if found is None:
        _show_warning.previous(message, category, filename, lineno, file, line)
    elif _told[found[1]]:
        _told[found[1]] -= 1
    else:
        print(DROPPED.format(call=_call(found[1])), file=file or sys.stderr)
        _said[0] = True


def say_unawaited() -> None:
    """Installed by the lesson's first cell (``verifier_dossier``); run again, it adds nothing.
    Outside a notebook's kernel, nothing changes."""
    shell = kernel_shell()
    if shell is None:
        return
    shell.display_formatter.formatters["text/plain"].for_type(types.CoroutineType, _shown)
    if _after_cell not in shell.events.callbacks["post_run_cell"]:
        shell.events.register("post_run_cell", _after_cell)
    if warnings.showwarning is not _show_warning:
        _show_warning.previous = warnings.showwarning
        warnings.showwarning = _show_warning
    # each time, not once per cell and line: a cell run again says it again
    warnings.filterwarnings("always", r"coroutine '.*' was never awaited", RuntimeWarning)
