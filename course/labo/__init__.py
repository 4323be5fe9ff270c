"""Le TP noté «\u00a0oublier un élève\u00a0»\u00a0: base d'exemple, vérification et notation.

- ``base_exemple()`` copie la base d'exemple (plusieurs élèves, deux applications), à
  explorer\u00a0;
- ``verifier(oublier)`` vérifie les sept critères de l'énoncé sur une copie de la base d'exemple
  et dit ce qui manque, une ligne par critère\u00a0;
- ``noter(oublier, "sessions")`` est ce qu'appellent les cellules de test du notebook\u00a0;
- ``cellule_oublier()`` relit votre cellule ``oublier`` dans le TP enregistré, et
  ``verifier(..., avec_adk=True)`` la vérifie sur la même base écrite par google-adk 2.10
  (l'annexe ADK).

Votre fonction ne s'exécute jamais dans le noyau du notebook\u00a0: elle tourne dans un processus
séparé, avec une limite de temps, sur une copie neuve de la base, et un autre processus lit
ensuite le fichier. Pendant la notation (nbgrader autograde), aucune cellule de votre notebook
n'est exécutée\u00a0: le processus de nbgrader prend votre fonction et la fait tourner dans un bac à
sable, avec d'autres élèves et d'autres identifiants que ceux de l'exemple\u00a0; rien de ce qui se
passe dans le noyau ne change la note. Ici, les tests cachés échouent toujours\u00a0: seule la
notation les calcule.
"""

from __future__ import annotations

import hashlib
import linecache
import os
from pathlib import Path
from typing import Any

from .criteria import CRITERIA, NOT_WRITTEN, TESTS, TITLES, Test, Verdict, grade_titles
from .evaluate import DEFAULT_TIMEOUT, Evaluation, evaluate_source, extract_source
from .fixture import write_fixture
from .french_number import french_number
from .scenario import VISIBLE
from .tp_notebook import TP_NOTEBOOK, OublierIntrouvable, oublier_cell_source

__all__ = [
    "TITLES",
    "CRITERIA",
    "DEFAULT_TIMEOUT",
    "EchecDuTest",
    "Evaluation",
    "OublierPasEcrite",
    "TESTS",
    "Test",
    "Verdict",
    "base_exemple",
    "cellule_oublier",
    "evaluate_source",
    "extract_source",
    "grade_titles",
    "noter",
    "source_de",
    "verifier",
]

# Set by nbgrader for the kernels it starts (nbgrader.utils.setenv): during autograde no cell of
# the TP runs in a kernel (grader/grading/hooks.py), so a kernel that sees this value is one the
# grading hooks were meant to keep out; there noter fails and verifier starts nothing. A student
# who sets it only turns off their own checks: it never makes a test pass.
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
_cache: dict[str, Evaluation] = {}
_told: list[bool] = []  # NO_SANDBOX_NOTE printed once per kernel


class _Readable(Exception):
    """An error IPython shows as its French lines only (``_render_traceback_``), without the
    frames of this package: a student reads what to do, not the grader's internals. It is still
    an error, so the cell fails and nbgrader gives it 0."""

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


def base_exemple(chemin: str | os.PathLike[str] = "exemple_oublier.db") -> Path:
    """Copie la base d'exemple du TP dans `chemin` (remplacée si elle existe) et la renvoie."""
    target = Path(chemin)
    for suffix in ("-wal", "-shm"):
        Path(f"{target}{suffix}").unlink(missing_ok=True)
    return write_fixture(target)


def source_de(oublier: Any) -> str:
    """Le texte de la cellule où `oublier` a été définie (toute la cellule, imports compris)\u00a0;
    un texte (le contenu d'une cellule, lu par `cellule_oublier`) est renvoyé tel quel."""
    if isinstance(oublier, str):
        return oublier
    code = getattr(oublier, "__code__", None)
    if code is None:
        raise PasUneFonction(
            "oublier doit être une fonction, définie avec async def dans la "
            f"cellule prévue (reçu\u00a0: {type(oublier).__name__})."
        )
    lines = linecache.getlines(code.co_filename)
    if not lines:
        import inspect

        return inspect.getsource(oublier)
    return "".join(lines)


def cellule_oublier(notebook: str | os.PathLike[str] = TP_NOTEBOOK) -> str | None:
    """Le texte de votre cellule `oublier`, lu dans le TP enregistré (par défaut
    ../oublier/oublier.ipynb)\u00a0; None, avec la raison affichée, s'il n'y est pas encore."""
    try:
        return oublier_cell_source(notebook)
    except OublierIntrouvable as reason:
        print(f"✘ {reason}")
        return None


def _evaluation(oublier: Any, backend: str = "course") -> Evaluation:
    source = source_de(oublier)
    key = backend + ":" + hashlib.sha256(source.encode()).hexdigest()
    if key not in _cache:
        if not _told:
            print(NO_SANDBOX_NOTE + "\n")
            _told.append(True)
        _cache[key] = evaluate_source(
            source, scenarios=(VISIBLE,), sandboxed=False, backend=backend
        )
    return _cache[key]


def _in_autograde() -> bool:
    return os.environ.get(NBGRADER_EXECUTION) == "autograde"


def _title(test: Test) -> str:
    return TITLES[test.criterion]


def noter(oublier: Any, test: str) -> None:
    """Un test du TP\u00a0: ne dit rien s'il est réussi, lève AssertionError (en français) sinon."""
    if test not in TESTS:
        raise ValueError(f"Test inconnu\u00a0: {test!r} (connus\u00a0: {', '.join(TESTS)}).")
    if _in_autograde():
        raise EchecDuTest(IN_AUTOGRADE, [f"✘ {IN_AUTOGRADE}"])
    if not TESTS[test].visible:
        raise EchecDuTest(HIDDEN_HERE, [f"✘ {HIDDEN_HERE}"])
    evaluation = _evaluation(oublier)
    if evaluation.not_written:
        raise OublierPasEcrite(NOT_WRITTEN, [f"✘ {NOT_WRITTEN}"])
    verdict = evaluation.verdicts[test]
    title = _title(TESTS[test])
    if not verdict.ok:
        raise EchecDuTest(verdict.message, [f"✘ {title}", f"    → {verdict.message}"])
    print(f"✔ {title}")


def verifier(oublier: Any, *, avec_adk: bool = False) -> None:
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
    respected = 0
    if problem:
        print(f"✘ {problem}")
    else:
        for criterion in CRITERIA:
            verdict = verdicts[criterion.key]
            respected += verdict.ok
            print(("✔ " if verdict.ok else "✘ ") + f"{criterion.number}. {criterion.title}")
            if not verdict.ok:
                print(f"    → {verdict.message}")
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
