"""What nbformat's reading of an invalid notebook costs, measured before nbgrader reads it.

A notebook fastjsonschema finds invalid, nbformat validates again with jsonschema for its
message, at a cost set by what is wrong, not by its size: an error kept per invalid value
(60,000 in one output: 48 s, 2.9 GB), tags compared pair by pair (5,000 dicts: 97 s), while an
older JupyterLab's, VS Code's or Colab's slightly invalid notebook reads in 0.01 s. Counting
its values refused those and missed nothing better than measuring does: each is read once, as
nbformat reads it, in one process of their own with a time budget per notebook and a memory
budget, and nbgrader, which reads it several times, is given only those within both."""

from __future__ import annotations

import json
import select
import subprocess
import sys
from pathlib import Path

from ..french.system_reason import GradingError

__all__ = ["READ_BYTES", "READ_SECONDS", "costly_reads"]

READ_SECONDS = 5.0  # an invalid notebook of a real tool: 0.01 s
READ_BYTES = 2**30
_START_SECONDS = 60.0  # the reader's own start (nbformat imported), on a busy machine
# its answers are ASCII keys: its output's encoding is the instructor's locale's
_READER = """
import json, sys
import nbformat
print("ready", flush=True)
for line in sys.stdin:
    try:
        nbformat.read(json.loads(line), as_version=4)
    except MemoryError:
        print("memory", flush=True)
    except Exception:  # unreadable: nbgrader names it, at no cost
        print("unreadable", flush=True)
    else:
        print("read", flush=True)
"""
_AFTER = (
    "\u00a0: demandez à l'élève de copier ses réponses dans un notebook du devoir neuf, puis de "
    "le rendre de nouveau"
)
SLOW = (
    "notebook qui ne respecte pas le format de Jupyter, que nbformat met plus de "
    f"{READ_SECONDS:.0f}\u00a0s à lire (nbgrader le lit plusieurs fois){_AFTER}"
)
BIG = (
    "notebook qui ne respecte pas le format de Jupyter, dont la lecture demande plus de "
    f"{READ_BYTES // 2**30}\u00a0Go de mémoire{_AFTER}"
)


def _budget() -> None:  # in the reader, before it starts
    import resource  # POSIX only: imported where it is used

    resource.setrlimit(resource.RLIMIT_AS, (READ_BYTES, READ_BYTES))


def _line(proc: subprocess.Popen, seconds: float) -> str | None:
    """The reader's next line within `seconds`: None if it took longer, "" if it died (its
    memory budget spent)."""
    assert proc.stdout is not None
    if not select.select([proc.stdout], [], [], seconds)[0]:
        return None
    return proc.stdout.readline().decode("utf-8").strip()


def costly_reads(notebooks: list[Path]) -> dict[Path, str]:
    """The `notebooks` nbformat cannot read within the budgets -> why, in French."""
    costly: dict[Path, str] = {}
    pending = list(notebooks)
    while pending:
        proc = subprocess.Popen(
            [sys.executable, "-I", "-c", _READER],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            preexec_fn=_budget,
        )
        assert proc.stdin is not None
        try:
            if _line(proc, _START_SECONDS) != "ready":
                raise GradingError(
                    f"Rien n'a été noté\u00a0: {sys.executable} n'a pas pu lire les notebooks "
                    "(nbformat ne se charge pas)\u00a0; vérifiez l'environnement (make setup)."
                )
            while pending:
                notebook = pending.pop(0)
                try:
                    proc.stdin.write((json.dumps(str(notebook)) + "\n").encode())
                    proc.stdin.flush()
                except BrokenPipeError:  # gone since its last answer: this one read anew
                    pending.insert(0, notebook)
                    break
                said = _line(proc, READ_SECONDS)
                if said in ("read", "unreadable"):
                    continue
                costly[notebook] = SLOW if said is None else BIG
                break  # a new reader for the rest
        finally:
            proc.kill()
            proc.wait()
    return costly
