"""course.labo.checks.refuse_stale in an IPython shell of this process (the kernel's test is
test_messages_eleve): the newest cell as typed that defines the function decides; a lone cell
magic, a null byte or a long history never break it."""

from __future__ import annotations

import pytest
from IPython.core.interactiveshell import InteractiveShell

from course.labo.checks import refuse_stale
from course.labo.learner_errors import CelluleModifiee

GOOD = "async def oublier(service, user_id):\n    return None\n"
BROKEN = "async def oublier(service, user_id):\n    return (\n"


@pytest.fixture
def shell():
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
    ],
)
def test_the_newest_cell_that_defines_it_decides(shell, cells, refused):
    for cell in cells:
        shell.run_cell(cell, store_history=True)
    namespace = shell.user_ns
    function = namespace["oublier"]
    if refused:
        with pytest.raises(CelluleModifiee, match="ne se compile pas"):
            refuse_stale(function)
    else:
        refuse_stale(function)
