"""nbgrader preprocessors grading the TP outside the notebook's kernel, in the sandbox, configured
in the order of the classes below in ``grader/nbgrader_config.py``. Without a usable sandbox grading
stops in French, unless ``StartOutOfKernelGrading.sandboxed`` is False (the unsafe mode)."""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

# Imported here, in nbgrader's main thread: importing IPython for the first time from the
# grading thread while the kernel client imports it too can fail (KeyError: 'IPython').
import IPython.core.inputtransformer2  # noqa: F401
from nbformat import NotebookNode
from nbgrader.preprocessors import Execute, NbGraderPreprocessor
from traitlets import Bool, Float, default

from course.labo.criteria import TESTS, TITLES
from course.labo.evaluate import DEFAULT_TIMEOUT, evaluate_source
from course.labo.partage import PARTAGE_TESTS, evaluate_partage
from course.labo.partage_base import clusters_root
from course.labo.sandbox import sandbox_problem
from course.labo.scenario import VISIBLE
from course.labo.tp_notebook import ANSWER_GRADE_ID
from course.postgres import PostgresIndisponible, binaires_postgres

from .hidden import HIDDEN
from .hidden_partage import HIDDEN_PARTAGE
from .outcome_record import METADATA_KEY, grading_record
from .release import MAX_NOTE, find_answer, nbgrader_meta, read_template, rebuild, template_path
from .sandbox_setting import NO_SANDBOX_ENV, SANDBOXED_HELP, SandboxUnavailable, refusal

__all__ = [
    "LABS",
    "ApplyOutOfKernelGrading",
    "ExecuteOutsideTheLab",
    "NotRebuilt",
    "RebuildFromRelease",
    "SandboxUnavailable",
    "StartOutOfKernelGrading",
]

ASSIGNMENT = "oublier"  # the TP's assignment and notebook
_REBUILT = "rebuilt_from"  # in METADATA_KEY between the sanitizing and the grading steps
_ANSWER_NOTE = "answer"
_RESOURCE = "labo_oublier_evaluation"  # (the evaluation's future, the note on the answer)
NOTE_SOLUTION = (
    "Cellule notée hors du noyau\u00a0: {} a été exécutée dans un processus séparé, "
    "sur une copie neuve de la base\u00a0; voir les tests ci-dessous.\n"
)
_DROPPED = "TP %s\u00a0: %s cellule(s) ajoutée(s) ou modifiée(s) par l'élève ignorée(s)"
NOTE_UNLOCKED = "Cellule non exécutée pendant la notation (seule la cellule {} compte).\n"
TIMEOUT_ENV = "COURSE_LABO_TIMEOUT"  # the instructor's time limit, as grader/README.md says
_COURSE_ROOT = Path(__file__).resolve().parents[3]  # grader/grading/nbgrader_ext/hooks.py


class NotRebuilt(RuntimeError):
    """A notebook of the TP's assignment reached grading without being rebuilt on the release."""


def _stdout(text: str) -> list[NotebookNode]:
    return [NotebookNode(output_type="stream", name="stdout", text=text)] if text else []


def _failure(message: str) -> list[NotebookNode]:
    trace = [f"Échec\u00a0: {message}"]
    return [NotebookNode(output_type="error", ename="Échec", evalue=message, traceback=trace)]


def _ids(resources: dict) -> tuple[str | None, str | None]:
    ids = resources.get("nbgrader") or {}
    return ids.get("assignment"), ids.get("notebook")


def _postgres_problem() -> str | None:
    try:
        binaires_postgres()
        clusters_root()  # where the servers go: checked before the class's first submission
    except (PostgresIndisponible, RuntimeError) as err:
        return f"Le TP oublier_partage se note sur un vrai PostgreSQL\u00a0: {err}"
    return None


@dataclass(frozen=True)
class Lab:
    """An assignment graded out of the kernel (its notebook named like it)."""

    assignment: str
    function: str
    evaluate: Callable[..., Any]  # (source, *, sandboxed, timeout) -> evaluation
    tests: dict[str, tuple[str, str]]  # grade_id -> (the verdict's key, the French title)
    problem: Callable[[], str | None] = lambda: None  # what grading needs and is missing


LABS: dict[str, Lab] = {
    ASSIGNMENT: Lab(
        ASSIGNMENT,
        ANSWER_GRADE_ID,
        partial(evaluate_source, scenarios=(VISIBLE, HIDDEN)),
        {t.grade_id: (t.id, TITLES[t.criterion]) for t in TESTS.values()},
    ),
    # the shared-database lab, if the teacher wants it graded: a real PostgreSQL per submission
    "oublier_partage": Lab(
        "oublier_partage",
        "oublier_partage",
        # each call has its own limit (course.labo.partage.CALL_TIMEOUT), not the submission's
        lambda source, *, sandboxed, timeout: evaluate_partage(
            source, HIDDEN_PARTAGE, sandboxed=sandboxed
        ),
        {t.grade_id: (t.id, t.title) for t in PARTAGE_TESTS},
        _postgres_problem,
    ),
}


def _lab(resources: dict) -> Lab | None:
    """The lab of the assignment being graded (any of its notebooks), None for another one."""
    return LABS.get(_ids(resources)[0] or "")


class RebuildFromRelease(NbGraderPreprocessor):
    """Sanitizing, first: the notebook to grade is the release with the student's two answers
    (``release``), so that a copy-pasted or forged cell cannot stop the class's grading."""

    def preprocess(self, nb: NotebookNode, resources: dict) -> tuple[NotebookNode, dict]:
        lab = _lab(resources)
        if lab is None:  # graded as it is: only a record the hooks write may reach the report
            nb.metadata.pop(METADATA_KEY, None)
            return nb, resources
        get = self.config.get("CourseDirectory", {}).get
        folders = (get("release_directory", "notebooks"), get("source_directory", "solutions"))
        path = template_path(Path(get("root") or _COURSE_ROOT), folders, *_ids(resources))
        rebuilt = rebuild(nb, read_template(path), lab.function)
        if rebuilt.dropped:
            self.log.warning(_DROPPED, lab.assignment, rebuilt.dropped)
        rebuilt.nb.metadata[METADATA_KEY] = {_REBUILT: path.name, _ANSWER_NOTE: rebuilt.note}
        return rebuilt.nb, resources


class StartOutOfKernelGrading(NbGraderPreprocessor):
    """Before Execute: the answer graded in a thread, each scenario in its own sandboxed process."""

    sandboxed = Bool(help=SANDBOXED_HELP).tag(config=True)
    timeout = Float(
        help="Limite de temps (secondes) de toute la notation d'un rendu. Par défaut\u00a0: "
        f"{TIMEOUT_ENV} s'il est posé, sinon {DEFAULT_TIMEOUT:g}."
    ).tag(config=True)

    @default("sandboxed")
    def _sandboxed_default(self) -> bool:
        return os.environ.get(NO_SANDBOX_ENV) != "1"  # off only when asked, at their own risk

    @default("timeout")
    def _timeout_default(self) -> float:
        return float(os.environ.get(TIMEOUT_ENV) or DEFAULT_TIMEOUT)

    def preprocess(self, nb: NotebookNode, resources: dict) -> tuple[NotebookNode, dict]:
        lab = _lab(resources)
        if lab is None:
            return nb, resources
        record = nb.metadata.get(METADATA_KEY)
        if not isinstance(record, dict) or _REBUILT not in record:
            raise NotRebuilt(
                "Ce notebook du TP n'a pas été reconstruit sur la version distribuée avant la "
                "notation\u00a0: ajoutez grading.nbgrader_ext.hooks.RebuildFromRelease en tête de "
                "Autograde.sanitize_preprocessors (grader/nbgrader_config.py)."
            )
        if _ids(resources)[1] != lab.assignment:  # another notebook of the assignment
            return nb, resources
        source, note = find_answer(nb.cells, None, lab.function)
        earlier = record.get(_ANSWER_NOTE)
        note = earlier if isinstance(earlier, str) and earlier else note
        if not self.sandboxed:
            self.log.warning(
                "TP %s\u00a0: notation SANS bac à sable (%s=1)", lab.assignment, NO_SANDBOX_ENV
            )
        elif problem := sandbox_problem():
            raise SandboxUnavailable(refusal(problem))
        if missing := lab.problem():
            raise SandboxUnavailable(missing)
        pool = ThreadPoolExecutor(max_workers=1)
        future = pool.submit(
            lab.evaluate, source or "", sandboxed=self.sandboxed, timeout=self.timeout
        )
        pool.shutdown(wait=False)
        resources[_RESOURCE] = (future, note[:MAX_NOTE])
        return nb, resources


class ExecuteOutsideTheLab(Execute):
    """nbgrader's Execute, except for a lab's answer notebook: its kernel runs as the grading
    user and could reach the gradebook, the hidden inputs, other submissions."""

    def preprocess(self, nb: NotebookNode, resources: dict) -> tuple[NotebookNode, dict]:
        if resources.get(_RESOURCE) is not None:
            return nb, resources
        return super().preprocess(nb, resources)


class ApplyOutOfKernelGrading(NbGraderPreprocessor):
    """After Execute: each test cell's output is its verdict (``SaveAutoGrades`` scores it)."""

    def preprocess(self, nb: NotebookNode, resources: dict) -> tuple[NotebookNode, dict]:
        started: tuple[Future, str] | None = resources.pop(_RESOURCE, None)
        if started is None:
            return nb, resources
        lab = _lab(resources)
        assert lab is not None
        evaluation = started[0].result()  # an infrastructure failure fails the submission loudly
        for cell in nb.cells:
            meta = nbgrader_meta(cell)
            test = lab.tests.get(meta.get("grade_id"))
            if cell.cell_type != "code" or (meta.get("grade") and test is None):
                continue
            if test is not None:
                verdict = evaluation.verdicts[test[0]]
                out = _stdout(f"✔ {test[1]}\n") if verdict.ok else _failure(verdict.message)
            elif meta.get("grade_id") == lab.function:
                out = _stdout(NOTE_SOLUTION.format(lab.function))
            else:
                out = _stdout("" if meta.get("locked") else NOTE_UNLOCKED.format(lab.function))
            cell.outputs = out
        nb.metadata[METADATA_KEY] = record = grading_record(evaluation, started[1])
        how = "bac à sable" if evaluation.sandboxed else "SANS bac à sable"
        facts = (evaluation.score, evaluation.max_score, evaluation.seconds, how, record["outcome"])
        self.log.info(
            "TP %s\u00a0: %s/%s points hors du noyau en %.1f s (%s, %s)", lab.assignment, *facts
        )
        return nb, resources
