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

from .criteria import CRITERES, TESTS, Test, Verdict
from .evaluate import DEFAULT_TIMEOUT, Evaluation, evaluate_source, extract_source
from .fixture import write_fixture

__all__ = [
    "CRITERES",
    "DEFAULT_TIMEOUT",
    "ENV_OUT_OF_KERNEL",
    "Evaluation",
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
NOT_WRITTEN = ("oublier n'est pas encore écrite : remplacez « raise NotImplementedError() » par "
               "votre code, puis relancez la cellule.")


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
        raise TypeError("oublier doit être une fonction (définie avec async def).")
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
        raise NotImplementedError(NOT_WRITTEN)
    verdict = evaluation.verdicts[test]
    if not verdict.ok:
        raise AssertionError(verdict.message)
    print(f"✔ {CRITERES[TESTS[test].critere]}")


def verifier(oublier: Any) -> None:
    """Lance les tests visibles sur une copie de la base d'exemple et affiche le résultat."""
    if _out_of_kernel():
        print("Vérification faite hors du noyau par nbgrader.")
        return
    evaluation = _evaluation(oublier)
    if evaluation.not_written:
        print(NOT_WRITTEN)
        return
    visibles = [t for t in TESTS.values() if t.visible]
    reussis = 0
    for t in visibles:
        v = evaluation.verdicts[t.id]
        reussis += v.ok
        print(("✔ " if v.ok else "✘ ") + CRITERES[t.critere])
        if not v.ok:
            print(f"    → {v.message}")
    print(f"\n{reussis}/{len(visibles)} tests visibles réussis "
          f"(en {evaluation.seconds:.1f} s). Les tests cachés vérifient tous les critères "
          "de l'énoncé, avec d'autres élèves.")
