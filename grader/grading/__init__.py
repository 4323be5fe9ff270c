"""The instructor's side of the TP's grading: never installed, never readable by students.

Importable from ``grader/`` only: nbgrader finds it because ``grader/nbgrader_config.py`` puts
its own folder on ``sys.path``; ``python -m grading.<tool>``, run in ``grader/`` (as ``make`` runs
it), because Python puts the current folder first. The installed ``course`` package holds only
what students may read and run.
"""

import sys

# Ctrl-C while a class command still starts (a second or two of imports, before its main and its
# class lock) is said in French, not as Python's English traceback. This file is the first code
# of the course every command runs: `python -m grading.<command>` imports this package to locate
# the command, and only then runs the command's module as __main__ (runpy's order). While it
# locates, and only then, sys.argv[0] is "-m" (Python's documented value for -m), so the hook is
# installed in the class commands alone: nbgrader's own processes, which import `grading`
# through nbgrader_config.py (the `nbgrader` script, JupyterLab, the formgrader, the sandbox's
# `python -c`), have a script or "-c" there and keep their own Ctrl-C. Safe in a command too: a
# hook runs only for an exception nothing caught, once the process ends; from the command's main
# on, it hands everything to the hook before it (class_lock says its own Ctrl-C). Importing this
# package does no I/O: one comparison, one assignment.


def _interrupted_at_start(kind: type[BaseException], value: BaseException, tb) -> None:  # noqa: ANN001
    """sys.excepthook of a class command: Ctrl-C before its main, in one French line, status
    130 (128 + SIGINT, the shell's code for Ctrl-C); anything else to the hook before it."""
    reached_main, step = False, tb
    while step is not None and not reached_main:
        code, module = step.tb_frame.f_code, step.tb_frame.f_globals.get("__name__")
        reached_main = code.co_name == "main" and module == "__main__"
        step = step.tb_next
    if not issubclass(kind, KeyboardInterrupt) or reached_main:
        _previous_hook(kind, value, tb)
        return
    import os
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C while this line is said
    from .classroom.class_lock import INTERRUPTED_AT_START

    print(f"✘ {INTERRUPTED_AT_START}", file=sys.stderr, flush=True)
    os._exit(130)  # nothing of the command ran: no output to flush, nothing to clean up


_previous_hook = sys.excepthook
if sys.argv[:1] == ["-m"]:
    sys.excepthook = _interrupted_at_start

from .runs.nbgrader_import import defer_package_init  # noqa: E402

__all__: list[str] = []

# every class command starts here: nbgrader's server extensions only if something asks for them
defer_package_init()
