"""Le labo noté « oublier un élève » : base d'exemple, vérification et notation.

- ``base_exemple()`` copie la base d'exemple (plusieurs élèves, deux applications) pour l'explorer ;
- ``verifier(oublier)`` lance les tests visibles et dit ce qui manque ;
- ``noter(oublier, "sessions")`` est ce qu'appellent les cellules de test du notebook.

Votre fonction ne s'exécute jamais dans le noyau du notebook : elle tourne dans un processus
séparé, avec une limite de temps, sur une copie neuve de la base, et un autre processus lit
ensuite le fichier. Pendant la notation (nbgrader autograde), c'est le processus de nbgrader qui
fait ce travail : rien de ce qui se passe dans le noyau ne change la note.
"""

from __future__ import annotations

import hashlib
import linecache
import os
from pathlib import Path
from typing import Any

from .criteria import CRITERES, NOT_WRITTEN, TESTS, Test, Verdict
from .evaluate import DEFAULT_TIMEOUT, Evaluation, evaluate_source, extract_source
from .fixture import write_fixture

__all__ = [
    "CRITERES",
    "DEFAULT_TIMEOUT",
    "ENV_OUT_OF_KERNEL",
    "EchecDuTest",
    "Evaluation",
    "OublierPasEcrite",
    "TESTS",
    "Test",
    "Verdict",
    "base_exemple",
    "evaluate_source",
    "extract_source",
    "noter",
    "source_de",
    "verifier",
]

# Set by nbgrader's process during autograde: the grade is computed there, not in the kernel.
ENV_OUT_OF_KERNEL = "COURSE_LABO_NOTATION_HORS_NOYAU"
_cache: dict[str, Evaluation] = {}


class _Lisible(Exception):
    """An error IPython shows as its French lines only (``_render_traceback_``), without the
    frames of this package: a student reads what to do, not the grader's internals. It is still
    an error, so the cell fails and nbgrader gives it 0."""

    def __init__(self, message: str, lignes: list[str] | None = None) -> None:
        super().__init__(message)
        self.lignes = lignes or [message]

    def _render_traceback_(self) -> list[str]:
        return list(self.lignes)


class OublierPasEcrite(_Lisible, NotImplementedError):
    """oublier still is the stub (its first call raised NotImplementedError)."""


class EchecDuTest(_Lisible, AssertionError):
    """A lab test failed: the criterion and what is missing, in French."""


class PasUneFonction(_Lisible, TypeError):
    """What was passed as oublier is not a function defined in the notebook."""


def base_exemple(chemin: str | os.PathLike[str] = "exemple_oublier.db") -> Path:
    """Copie la base d'exemple du labo dans `chemin` (remplacée si elle existe) et la renvoie."""
    cible = Path(chemin)
    for suffixe in ("-wal", "-shm"):
        Path(f"{cible}{suffixe}").unlink(missing_ok=True)
    return write_fixture(cible)


def source_de(oublier: Any) -> str:
    """Le texte de la cellule où `oublier` a été définie (toute la cellule, imports compris)."""
    code = getattr(oublier, "__code__", None)
    if code is None:
        raise PasUneFonction(
            "oublier doit être une fonction, définie avec async def dans la "
            f"cellule prévue (reçu : {type(oublier).__name__})."
        )
    lines = linecache.getlines(code.co_filename)
    if not lines:
        import inspect

        return inspect.getsource(oublier)
    return "".join(lines)


def _evaluation(oublier: Any) -> Evaluation:
    source = source_de(oublier)
    key = hashlib.sha256(source.encode()).hexdigest()
    if key not in _cache:
        _cache[key] = evaluate_source(source)
    return _cache[key]


def _out_of_kernel() -> bool:
    return os.environ.get(ENV_OUT_OF_KERNEL) == "1"


def noter(oublier: Any, test: str) -> None:
    """Un test du labo : ne dit rien s'il est réussi, lève AssertionError (en français) sinon."""
    if test not in TESTS:
        raise ValueError(f"Test inconnu : {test!r} (connus : {', '.join(TESTS)}).")
    if _out_of_kernel():
        print("Noté hors du noyau par nbgrader.")
        return
    evaluation = _evaluation(oublier)
    if evaluation.not_written:
        raise OublierPasEcrite(NOT_WRITTEN, [f"✘ {NOT_WRITTEN}"])
    verdict = evaluation.verdicts[test]
    critere = CRITERES[TESTS[test].critere]
    if not verdict.ok:
        raise EchecDuTest(verdict.message, [f"✘ {critere}", f"    → {verdict.message}"])
    print(f"✔ {critere}")


def verifier(oublier: Any) -> None:
    """Lance les tests visibles sur une copie de la base d'exemple et affiche le résultat."""
    if _out_of_kernel():
        print("Vérification faite hors du noyau par nbgrader.")
        return
    evaluation = _evaluation(oublier)
    visibles = [t for t in TESTS.values() if t.visible]
    if evaluation.not_written:
        print(f"✘ {NOT_WRITTEN}\n\n0/{len(visibles)} tests visibles réussis.")
        return
    reussis = 0
    for t in visibles:
        v = evaluation.verdicts[t.id]
        reussis += v.ok
        print(("✔ " if v.ok else "✘ ") + CRITERES[t.critere])
        if not v.ok:
            print(f"    → {v.message}")
    print(
        f"\n{reussis}/{len(visibles)} tests visibles réussis "
        f"(en {evaluation.seconds:.1f} s). Les tests cachés vérifient tous les critères "
        "de l'énoncé, avec d'autres élèves."
    )
