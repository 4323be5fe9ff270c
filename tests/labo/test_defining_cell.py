"""course.labo.checks.defining_cell in an IPython shell of this process (the kernel's test is
test_messages_eleve): the newest cell as typed that defines the function at its top level
decides; a lone cell magic, a null byte or a long history never break it; a cell magic that
runs no Python defines nothing; a fix under %%time is read from the history."""

from __future__ import annotations

import pytest
from IPython.core.interactiveshell import InteractiveShell

from course.labo.checks import defining_cell, source_of
from course.labo.learner_errors import CelluleModifiee

GOOD = "async def oublier(service, user_id):\n    return None\n"
BROKEN = "async def oublier(service, user_id):\n    return (\n"


@pytest.fixture
def shell(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # %%writefile writes there
    shell = InteractiveShell.instance()
    try:
        yield shell
    finally:
        InteractiveShell.clear_instance()


@pytest.mark.parametrize(
    "cells, refused",
    [
        ([GOOD], False),
        ([GOOD, BROKEN], True),
        ([GOOD, BROKEN, GOOD], False),
        ([GOOD, BROKEN, "%%time\n" + GOOD], False),
        ([GOOD, "%%time\n" + BROKEN], True),
        ([GOOD, "%%time"], False),  # a cell magic alone: no body
        ([GOOD, "x = '\0'"], False),  # not Python a parser takes: passed over
        ([GOOD, BROKEN, f"texte = {GOOD!r}"], True),  # a definition in a string defines nothing
        ([GOOD, *(f"x{k} = {k}" for k in range(200))], False),
        # third learner's walk, stop 57
        ([GOOD, "%%writefile brouillon.py\n" + BROKEN], False),  # a file written, no Python run
        ([GOOD, "%%script false\n" + BROKEN], False),
        ([GOOD, BROKEN, "\n%%time\n" + GOOD], False),  # a blank line before the magic
        ([GOOD, BROKEN, "class Essai:\n    def oublier(self):\n        pass\n"], True),
        ([GOOD, BROKEN, "def aide():\n    def oublier():\n        pass\n"], True),
        ([GOOD, "if True:\n    " + BROKEN.replace("\n", "\n    ")], True),
    ],
)
def test_the_newest_cell_that_defines_it_decides(shell, cells, refused):
    for cell in cells:
        shell.run_cell(cell, store_history=True)
    namespace = shell.user_ns
    function = namespace["oublier"]
    if refused:
        with pytest.raises(CelluleModifiee, match="ne se compile pas"):
            defining_cell(function)
    else:
        defining_cell(function)


def test_a_function_defined_under_time_is_read_from_the_history(shell):
    """Third learner's walk, stop 57: a fix run under %%time made verifier fail with
    « OSError: could not get source code »: IPython keeps no lines of such a cell."""
    shell.run_cell("%%time\n" + GOOD, store_history=True)
    assert source_of(shell.user_ns["oublier"]).strip() == GOOD.strip()
