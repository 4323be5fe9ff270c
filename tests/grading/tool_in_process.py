"""A class tool's ``main()`` run in the test process, as ``python -m grading.<tool>`` runs it in a
course's grader/ folder: the same code on the same files, without starting Python and importing
nbgrader again (about 3 s of CPU each time). Tests run the real command first (what the
teacher types) and their reruns through this; the commands themselves are tested from a fresh
clone in tests/grading/test_entry_points.py."""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from grading_course import tool_env

__all__ = ["in_process"]


def in_process(
    main: Callable[[list[str]], int], grader: Path, *args: str
) -> subprocess.CompletedProcess:
    """``main(args)`` started in `grader`: its exit status and what it printed, as
    ``subprocess.run`` reports a command. The working folder, ``sys.path`` (the course's
    ``nbgrader_config.py`` adds its folder when read), the environment and the temporary folder
    are put back afterwards."""
    out, err = io.StringIO(), io.StringIO()
    cwd, path, environ, tempdir = os.getcwd(), list(sys.path), dict(os.environ), tempfile.tempdir
    tempfile.tempdir = None  # read TMPDIR again, as a new process would
    try:
        os.chdir(grader)
        os.environ.update(tool_env())  # the venv's bin/ first, grader/ importable: as `make`
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                status = main(list(args))
            except SystemExit as exc:  # argparse's errors, as the command exits
                status = exc.code if isinstance(exc.code, int) else 1
    finally:
        os.chdir(cwd)
        sys.path[:] = path
        os.environ.clear()
        os.environ.update(environ)
        tempfile.tempdir = tempdir
    return subprocess.CompletedProcess(["main", *args], status, out.getvalue(), err.getvalue())
