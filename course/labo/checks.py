"""``noter`` and ``verifier``, the checks a learner runs in the TP's notebook.

Each evaluates the learner's cell out of the kernel (``course.labo.evaluate``, without the
sandbox: their code, their rights) on the visible scenario only, once per cell text and backend
per kernel, and says the result in French. Hidden tests always fail here: only the grading hooks
compute them. In a kernel nbgrader starts for autograde (``NBGRADER_EXECUTION=autograde``) the
hooks keep every cell of the TP out of it, so if one ever runs there, its tests fail and
``verifier`` starts nothing; a student who sets the variable only turns off their own checks.
"""

from __future__ import annotations

import ast
import hashlib
import inspect
import linecache
import os
import re
from typing import Any

from ..readable_error import kernel_shell
from .criteria import (
    CRITERIA,
    NOT_WRITTEN,
    OPEN_TRANSACTION_START,
    TESTS,
    TITLES,
    Verdict,
    call_notes,
)
from .evaluate import Evaluation, evaluate_source
from .french_number import french_number
from .learner_errors import (
    CelluleModifiee,
    EchecDuTest,
    MauvaisArgument,
    OublierPasEcrite,
    PasUneFonction,
    interrupted_in_french,
)
from .scenario import VISIBLE, Role

__all__ = [
    "HIDDEN_HERE",
    "split_notes",
    "tp_cause",
    "IN_AUTOGRADE",
    "NO_SANDBOX_NOTE",
    "noter",
    "defining_cell",
    "say_verdicts",
    "source_of",
    "verifier",
]

# Set by nbgrader for the kernels it starts (nbgrader.utils.setenv).
NBGRADER_EXECUTION = "NBGRADER_EXECUTION"
HIDDEN_HERE = (
    "Test caché\u00a0: il n'est calculé que pendant la notation, hors de ce notebook, avec "
    "d'autres élèves et d'autres identifiants\u00a0; ici, il échoue toujours."
)
IN_AUTOGRADE = (
    "Notation en cours\u00a0: les tests sont calculés hors de ce noyau, dans un bac à sable\u00a0; "
    "ici, ils échouent toujours."
)
NO_SANDBOX_NOTE = (
    "Vérification sans bac à sable\u00a0: votre fonction s'exécute avec vos propres droits, "
    "dans un processus séparé, sur une copie de la base d'exemple. Pendant la notation, elle "
    "s'exécute dans un bac à sable (sans réseau, sans accès aux fichiers de l'enseignant)."
)
_cache: dict[str, Evaluation] = {}  # backend and cell text -> its evaluation, per kernel
_told: set[str] = set()  # notes already printed in this kernel (each is said once)


def source_of(oublier: Any) -> str:
    """The text of the cell where `oublier` was defined (the whole cell, imports included); a
    text (a cell's content, read by `cellule_oublier`) is returned as is."""
    if isinstance(oublier, str):
        return oublier
    if oublier is None:  # verifier() alone
        raise PasUneFonction(
            "Donnez votre fonction à vérifier, sans parenthèses\u00a0: verifier(oublier)."
        )
    code = getattr(oublier, "__code__", None)
    if code is None:
        raise PasUneFonction(
            "oublier doit être une fonction, définie avec async def dans la "
            f"cellule prévue (reçu\u00a0: {type(oublier).__name__})."
        )
    cell = defining_cell(oublier)  # raises when that cell no longer compiles
    lines = linecache.getlines(code.co_filename)
    if lines:
        return "".join(lines)
    if cell is not None:  # defined under %%time: IPython keeps no lines of it
        return cell
    try:
        return inspect.getsource(oublier)
    except (OSError, TypeError):
        raise PasUneFonction(
            "le texte de oublier est introuvable (définie autrement que dans une cellule du "
            "notebook)\u00a0: définissez-la avec async def dans la cellule prévue, puis "
            "relancez."
        ) from None


# cell magics that run their body as Python in the kernel (%%writefile, %%script, %%html… do not)
_PYTHON_CELL_MAGICS = ("%%time", "%%timeit", "%%capture", "%%prun", "%%debug")


def _defines(statements: list[ast.stmt], name: str) -> bool:
    """Whether `statements` define `name` at the module's level (a block's too: ``if``, ``try``,
    ``with``), never inside a function or a class."""
    for node in statements:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == name:
            return True
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            blocks = [getattr(node, f, []) for f in ("body", "orelse", "finalbody")]
            blocks += [h.body for h in getattr(node, "handlers", [])]
            if any(_defines(b, name) for b in blocks if isinstance(b, list)):
                return True
    return False


def defining_cell(function: Any) -> str | None:
    """The newest cell run (IPython's history as typed, the running one included) that defines
    `function` at its top level, its cell magic taken off; None outside a kernel, or if no cell
    does. Raises CelluleModifiee when that cell does not compile: the function in memory is the
    one before, and a check would pass an answer that grading, which reads the cell, gives 0."""
    shell = kernel_shell()
    name = getattr(function, "__name__", "")
    if shell is None or not name.isidentifier():
        return None
    for typed in reversed(shell.history_manager.input_hist_raw):
        if not isinstance(typed, str):
            continue
        code = typed.lstrip("\n")
        if code.startswith("%%"):
            magic, _, code = code.partition("\n")
            if magic.split()[0] not in _PYTHON_CELL_MAGICS:
                continue  # %%writefile, %%script…: nothing defined in the kernel
        try:
            tree = ast.parse(shell.transform_cell(code))
        except (SyntaxError, ValueError) as exc:  # ValueError: a null byte
            if re.search(rf"^\s*(?:async\s+)?def\s+{name}\s*\(", code, re.M):
                lineno = getattr(exc, "lineno", None) or 1
                raise CelluleModifiee(
                    f"Votre cellule {name}, telle que vous l'avez exécutée en dernier, ne se "
                    f"compile pas (ligne {lineno})\u00a0: la fonction en mémoire vient d'une "
                    "exécution d'avant, et la notation lira la cellule telle qu'elle est. "
                    "Corrigez-la, exécutez-la, puis relancez la vérification."
                ) from None
            continue
        if _defines(tree.body, name):
            return code
    return None


def _tell_once(note: str) -> None:
    if note not in _told:
        print(note + "\n")
        _told.add(note)


def _evaluation(oublier: Any, backend: str = "course") -> Evaluation:
    source = source_of(oublier)
    key = backend + ":" + hashlib.sha256(source.encode()).hexdigest()
    if key not in _cache:
        _tell_once(NO_SANDBOX_NOTE)
        with interrupted_in_french():
            _cache[key] = evaluate_source(
                source, scenarios=(VISIBLE,), sandboxed=False, backend=backend
            )
    return _cache[key]


# What _notes (criteria.py) appends to every failing criterion's message: said once, at the end
_NOTE_STARTS = (" De plus, ", " " + OPEN_TRANSACTION_START)


def split_notes(message: str) -> tuple[str, str]:
    """A verdict's message as (its own cause, the notes about the whole call)."""
    cut = min((i for i in (message.find(n) for n in _NOTE_STARTS) if i >= 0), default=-1)
    if cut < 0:
        return message, ""
    return message[:cut], message[cut + 1 :]


def tp_cause(evaluation: Evaluation) -> str | None:
    """The one cause ``indice()`` explains next: the call's own fault first (not async, a
    transaction left open or rolled back), else the first criterion failed; None if all hold."""
    if evaluation.not_written or evaluation.load_error:
        return "tp:depart"
    result = evaluation.results.get(VISIBLE.name)
    erase = result.of(Role.ERASE) if result else ()
    outcome = erase[0].outcome if erase else None
    error = outcome.error.message if outcome is not None and outcome.error is not None else ""
    coroutine = "'coroutine' object" in error
    if outcome is not None and (outcome.not_async or outcome.unawaited or coroutine):
        return "tp:async"  # not an async def, or a service call without await
    if outcome is not None and (
        outcome.open_transaction
        or "transaction" in error.lower()
        or (outcome.rolled_back and not error)
    ):
        return "tp:transaction"
    facts = erase[0].facts if erase else None
    if outcome is None or error or facts is None or not (facts.present and facts.readable):
        return "tp:appel"  # out of time, stopped, raised, or the file taken away
    verdicts = evaluation.criteria.get(VISIBLE.name, {})
    failed = [c.key for c in CRITERIA if not verdicts[c.key].ok]
    return f"tp:{failed[0]}" if failed else None


def say_verdicts(problem: str | None, rows: list[tuple[str, Verdict]]) -> int:
    """Print a check's lines, as both TPs' verifiers say them: the one reason that stopped it
    before judging, or a line per criterion whose failure gives its cause once (the same cause,
    a gate or a rolled-back call, is said once) and the notes about the whole call last.
    Returns how many criteria are respected."""
    if problem:
        print(f"✘ {problem}")
        return 0
    notes: dict[str, str] = {}  # by what it says before its detail: one per kind of fault
    said: set[str] = set()
    for title, verdict in rows:
        print(("✔ " if verdict.ok else "✘ ") + title)
        if verdict.ok:
            continue
        cause, note = split_notes(verdict.message)
        if note:
            # the same exception raised on both example bases differs only by the base's
            # name in its message: said once
            notes.setdefault(note.split("\u00a0: ", 1)[0], note)
        print(f"    → {cause}" if cause not in said else "    → (même cause que plus haut)")
        said.add(cause)
    for note in notes.values():
        note = note.removeprefix("De plus, ")
        print(f"\nPour tout l'appel\u00a0: {note[:1].lower()}{note[1:]}")
    return sum(verdict.ok for _, verdict in rows)


def _in_autograde() -> bool:
    return os.environ.get(NBGRADER_EXECUTION) == "autograde"


def _record_run(respected: int, cause: str | None) -> None:
    """The run in the learner's progress file, and the ladder indice() climbs next."""
    from .. import progress
    from ..hints import offer_hints

    progress.record("tp", "verifier", respectes=respected, criteres=len(CRITERIA), cause=cause)
    offer_hints(cause)


def noter(oublier: Any, test: str) -> None:
    """Un test du TP\u00a0: ne dit rien s'il est réussi, lève AssertionError (en français) sinon."""
    if test not in TESTS:
        raise MauvaisArgument(f"Test inconnu\u00a0: {test!r} (connus\u00a0: {', '.join(TESTS)}).")
    if _in_autograde():
        raise EchecDuTest(IN_AUTOGRADE, [f"✘ {IN_AUTOGRADE}"])
    if not TESTS[test].visible:
        raise EchecDuTest(HIDDEN_HERE, [f"✘ {HIDDEN_HERE}"])
    evaluation = _evaluation(oublier)
    if evaluation.not_written:
        raise OublierPasEcrite(NOT_WRITTEN, [f"✘ {NOT_WRITTEN}"])
    verdict = evaluation.verdicts[test]
    title = TITLES[TESTS[test].criterion]
    if not verdict.ok:
        raise EchecDuTest(verdict.message, [f"✘ {title}", f"    → {verdict.message}"])
    print(f"✔ {title}")


def verifier(oublier: Any = None, *, avec_adk: bool = False) -> None:
    """Vérifie les sept critères sur une copie de la base d'exemple et affiche le résultat.

    Avec ``avec_adk=True``, la base d'exemple est écrite par le SqliteSessionService de
    google-adk 2.10, et `oublier` reçoit ce service-là (avec ``db_path``, le chemin que vous
    garderiez vous-même\u00a0: ADK ne le donne pas).
    """
    if _in_autograde():
        print("Vérification non lancée pendant la notation (elle est faite hors du noyau).")
        return
    evaluation = _evaluation(oublier, "adk" if avec_adk else "course")
    verdicts = evaluation.criteria[VISIBLE.name]
    problem = NOT_WRITTEN if evaluation.not_written else evaluation.load_error
    rows = [(f"{c.number}. {c.title}", verdicts[c.key]) for c in CRITERIA]
    respected = say_verdicts(problem, rows)
    visible = sum(1 for t in TESTS.values() if t.visible)
    seconds = french_number(evaluation.seconds, 1)
    if avec_adk:
        print(
            f"\n{respected}/{len(CRITERIA)} critères respectés sur la base d'exemple écrite par "
            f"google-adk 2.10, avec le service d'ADK (vérifiés en {seconds}\u00a0s). Ce n'est "
            "pas une note\u00a0: le TP est noté par ses tests, avec le service du cours."
        )
        return
    print(
        f"\n{respected}/{len(CRITERIA)} critères respectés sur la base d'exemple (vérifiés en "
        f"{seconds}\u00a0s). La note vient des {len(TESTS)} tests notés\u00a0: {visible} "
        f"visibles dans ce notebook, {len(TESTS) - visible} cachés, qui vérifient les mêmes "
        "critères avec d'autres élèves et d'autres identifiants."
    )
    result = evaluation.results.get(VISIBLE.name)
    if respected == len(CRITERIA) and result and (note := call_notes(result)):
        print(f"⚠ Les critères tiennent, mais ceci reste à corriger\u00a0: {note}")
    _record_run(respected, tp_cause(evaluation))
