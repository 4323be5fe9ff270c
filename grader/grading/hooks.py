"""nbgrader preprocessors that grade the TP outside the notebook's kernel, in the sandbox.

Configured in ``grader/nbgrader_config.py`` around nbgrader's ``Execute``:
``StartOutOfKernelGrading`` takes the student's ``oublier`` cell from the notebook file, starts
its evaluation in a background thread (it runs while the kernel executes the notebook: visible
and hidden scenarios, each in its own sandboxed process) and tells the kernel's test cells not to
grade. It also keeps every cell the student could write out of the kernel (the ``oublier`` cell
becomes a placeholder, the other cells that are not tests are blanked, and all are restored
afterwards): a top-level ``await`` that never ends, which a kernel interrupt cannot stop
(ipykernel issue 881), can then never hold the grading of a class.
``ApplyOutOfKernelGrading`` writes each test cell's output from the evaluation (a check mark on
success, an error with a French message on failure), so nbgrader's ``SaveAutoGrades`` scores the
file, not whatever the kernel printed, and records how grading went in the notebook's metadata
(``course_grading``: ``outcome`` and ``detail``) for the class report.

Without a usable sandbox, grading stops with a French message that says what to install, unless
``COURSE_GRADING_NO_SANDBOX=1`` asks for the unsafe mode on purpose.
"""

from __future__ import annotations

import os
from concurrent.futures import Future, ThreadPoolExecutor

# Imported here, in nbgrader's main thread: importing IPython for the first time from the
# grading thread while the kernel client imports it too can fail (KeyError: 'IPython').
import IPython.core.inputtransformer2  # noqa: F401
from nbformat import NotebookNode
from nbgrader.preprocessors import NbGraderPreprocessor

from course.labo import ENV_OUT_OF_KERNEL
from course.labo.criteria import TESTS, TITLES
from course.labo.evaluate import evaluate_source
from course.labo.sandbox import NO_SANDBOX_ENV, sandbox_problem
from course.labo.scenario import VISIBLE

from .hidden import HIDDEN

__all__ = [
    "METADATA_KEY",
    "PLACEHOLDER",
    "SOLUTION_GRADE_ID",
    "ApplyOutOfKernelGrading",
    "SandboxUnavailable",
    "StartOutOfKernelGrading",
    "unsafe_mode",
]

SOLUTION_GRADE_ID = "oublier"
METADATA_KEY = "course_grading"  # kept by ClearMetadataPreprocessor (nbgrader_config.py)
SCENARIOS = (VISIBLE, HIDDEN)
_RESOURCE = "labo_oublier_evaluation"
_ORIGINALS = "labo_oublier_sources"
PLACEHOLDER = (
    "from course.labo import base_exemple, noter, verifier\n\n\n"
    "async def oublier(service, user_id: str) -> None:\n"
    "    raise RuntimeError('oublier est notée hors du noyau')"
)
NOTE_SOLUTION = (
    "Cellule notée hors du noyau\u00a0: oublier a été exécutée dans un processus séparé, "
    "sur une copie neuve de la base\u00a0; voir les tests ci-dessous.\n"
)
NOTE_UNLOCKED = "Cellule non exécutée pendant la notation (seule la cellule oublier compte).\n"
_BY_GRADE_ID = {t.grade_id: t for t in TESTS.values()}


class SandboxUnavailable(RuntimeError):
    """Grading refused: no usable sandbox and no explicit unsafe mode."""


def unsafe_mode() -> bool:
    """True when the instructor asked to grade without the sandbox (at their own risk)."""
    return os.environ.get(NO_SANDBOX_ENV) == "1"


def _refusal(problem: str) -> str:
    return (
        f"{problem} La notation refuse d'exécuter le code des élèves sans bac à sable. "
        "Pour noter quand même, à vos risques (leur code aurait alors tous vos droits), "
        f"lancez-la avec --sans-bac-a-sable (make grade SANS_BAC_A_SABLE=1), qui pose "
        f"{NO_SANDBOX_ENV}=1."
    )


def _nbgrader(cell: NotebookNode) -> dict:
    return cell.get("metadata", {}).get("nbgrader", {})


def _solution_source(nb: NotebookNode) -> str | None:
    for cell in nb.cells:
        meta = _nbgrader(cell)
        if cell.cell_type == "code" and meta.get("grade_id") == SOLUTION_GRADE_ID:
            return cell.source
    return None


def _evaluate(source: str):
    return evaluate_source(source, scenarios=SCENARIOS, sandboxed=not unsafe_mode())


class StartOutOfKernelGrading(NbGraderPreprocessor):
    """Before Execute: start grading the ``oublier`` cell in separate, sandboxed processes."""

    def preprocess(self, nb: NotebookNode, resources: dict) -> tuple[NotebookNode, dict]:
        os.environ.pop(ENV_OUT_OF_KERNEL, None)
        source = _solution_source(nb)
        if source is None:
            return nb, resources
        if not unsafe_mode():
            problem = sandbox_problem()
            if problem:
                raise SandboxUnavailable(_refusal(problem))
        else:
            self.log.warning("TP oublier\u00a0: notation SANS bac à sable (%s=1)", NO_SANDBOX_ENV)
        pool = ThreadPoolExecutor(max_workers=1)
        resources[_RESOURCE] = pool.submit(_evaluate, source)
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
    """After Execute: replace each test cell's outputs by the out-of-kernel verdict."""

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
        verdicts = evaluation.verdicts
        for cell in nb.cells:
            test = _BY_GRADE_ID.get(_nbgrader(cell).get("grade_id"))
            if cell.cell_type != "code" or test is None:
                continue
            verdict = verdicts[test.id]
            if verdict.ok:
                text = f"✔ {TITLES[test.criterion]}\n"
                cell.outputs = [NotebookNode(output_type="stream", name="stdout", text=text)]
            else:
                cell.outputs = [
                    NotebookNode(
                        output_type="error",
                        ename="Échec",
                        evalue=verdict.message,
                        traceback=[f"Échec\u00a0: {verdict.message}"],
                    )
                ]
        outcome, detail = evaluation.outcome()
        nb.metadata[METADATA_KEY] = {"outcome": outcome, "detail": detail}
        self.log.info(
            "TP oublier\u00a0: %s/%s points hors du noyau en %.1f s (%s, %s)",
            evaluation.score,
            evaluation.max_score,
            evaluation.seconds,
            "bac à sable" if evaluation.sandboxed else "SANS bac à sable",
            outcome,
        )
        return nb, resources
