"""nbgrader preprocessors that grade the lab outside the notebook's kernel.

Configured in ``grader/nbgrader_config.py`` around nbgrader's ``Execute``:
``StartOutOfKernelGrading`` takes the student's ``oublier`` cell from the notebook file, starts
its evaluation in a background thread (it runs while the kernel executes the notebook) and tells
the kernel's test cells not to grade. It also keeps every cell the student could write out of the
kernel (the ``oublier`` cell becomes a placeholder, the other cells that are not tests are
blanked, and all are restored afterwards): a top-level ``await`` that never ends, which a kernel
interrupt cannot stop (ipykernel issue 881), can then never hold the grading of a class.
``ApplyOutOfKernelGrading`` writes each test cell's output from the evaluation (a check mark on
success, an error with a French message on failure), so nbgrader's ``SaveAutoGrades`` scores the
file, not whatever the kernel printed.
"""

from __future__ import annotations

import os
from concurrent.futures import Future, ThreadPoolExecutor

# Imported here, in nbgrader's main thread: importing IPython for the first time from the
# grading thread while the kernel client imports it too can fail (KeyError: 'IPython').
import IPython.core.inputtransformer2  # noqa: F401
from nbformat import NotebookNode
from nbgrader.preprocessors import NbGraderPreprocessor

from . import ENV_OUT_OF_KERNEL
from .criteria import CRITERES, TESTS
from .evaluate import evaluate_source

__all__ = ["ApplyOutOfKernelGrading", "SOLUTION_GRADE_ID", "StartOutOfKernelGrading"]

SOLUTION_GRADE_ID = "oublier"
_RESOURCE = "labo_oublier_evaluation"
_ORIGINALS = "labo_oublier_sources"
PLACEHOLDER = (
    "from course.labo import base_exemple, noter, verifier\n\n\n"
    "async def oublier(service, user_id: str) -> None:\n"
    "    raise RuntimeError('oublier est notée hors du noyau')"
)
NOTE_SOLUTION = (
    "Cellule notée hors du noyau : oublier a été exécutée dans un processus séparé, "
    "sur une copie neuve de la base ; voir les tests ci-dessous.\n"
)
NOTE_UNLOCKED = "Cellule non exécutée pendant la notation (seule la cellule oublier compte).\n"
_BY_GRADE_ID = {t.grade_id: t for t in TESTS.values()}


def _nbgrader(cell: NotebookNode) -> dict:
    return cell.get("metadata", {}).get("nbgrader", {})


def _solution_source(nb: NotebookNode) -> str | None:
    for cell in nb.cells:
        meta = _nbgrader(cell)
        if cell.cell_type == "code" and meta.get("grade_id") == SOLUTION_GRADE_ID:
            return cell.source
    return None


class StartOutOfKernelGrading(NbGraderPreprocessor):
    """Before Execute: start grading the ``oublier`` cell in a separate process."""

    def preprocess(self, nb: NotebookNode, resources: dict) -> tuple[NotebookNode, dict]:
        os.environ.pop(ENV_OUT_OF_KERNEL, None)
        source = _solution_source(nb)
        if source is None:
            return nb, resources
        pool = ThreadPoolExecutor(max_workers=1)
        resources[_RESOURCE] = pool.submit(evaluate_source, source)
        pool.shutdown(wait=False)
        os.environ[ENV_OUT_OF_KERNEL] = "1"
        originals = {}
        for index, cell in enumerate(nb.cells):
            meta = _nbgrader(cell)
            if cell.cell_type != "code":
                continue
            if meta.get("grade_id") == SOLUTION_GRADE_ID:
                originals[index] = (cell.source, NOTE_SOLUTION)
                cell.source = PLACEHOLDER
            elif not meta.get("grade"):  # set-up, exploration, the student's own cells
                originals[index] = (cell.source, None if meta.get("locked") else NOTE_UNLOCKED)
                cell.source = ""
        resources[_ORIGINALS] = originals
        return nb, resources


class ApplyOutOfKernelGrading(NbGraderPreprocessor):
    """After Execute: replace each lab test cell's outputs by the out-of-kernel verdict."""

    def preprocess(self, nb: NotebookNode, resources: dict) -> tuple[NotebookNode, dict]:
        os.environ.pop(ENV_OUT_OF_KERNEL, None)
        future: Future | None = resources.pop(_RESOURCE, None)
        if future is None:
            return nb, resources
        for index, (source, note) in resources.pop(_ORIGINALS, {}).items():
            cell = nb.cells[index]
            cell.source = source
            cell.outputs = (
                [NotebookNode(output_type="stream", name="stdout", text=note)] if note else []
            )
        evaluation = future.result()  # an infrastructure failure fails the submission loudly
        for cell in nb.cells:
            test = _BY_GRADE_ID.get(_nbgrader(cell).get("grade_id"))
            if cell.cell_type != "code" or test is None:
                continue
            verdict = evaluation.verdicts[test.id]
            if verdict.ok:
                cell.outputs = [
                    NotebookNode(
                        output_type="stream", name="stdout", text=f"✔ {CRITERES[test.critere]}\n"
                    )
                ]
            else:
                cell.outputs = [
                    NotebookNode(
                        output_type="error",
                        ename="Échec",
                        evalue=verdict.message,
                        traceback=[f"Échec : {verdict.message}"],
                    )
                ]
        self.log.info(
            "labo oublier : %s/%s points hors du noyau en %.1f s",
            evaluation.score,
            sum(t.points for t in TESTS.values()),
            evaluation.seconds,
        )
        return nb, resources
