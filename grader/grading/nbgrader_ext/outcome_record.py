"""How the lab's grading went for one submission: ``nb.metadata[METADATA_KEY] == {"outcome":
<course.labo.outcome.Outcome value>, "detail": <French>}``, written by the hooks, read by the
report (``grader/nbgrader_config.py`` keeps the key through nbgrader's metadata clearing).
"""

from __future__ import annotations

from typing import Any

from course.labo.evaluate import Evaluation
from course.labo.french_number import french_number
from course.labo.outcome import Outcome

__all__ = ["METADATA_KEY", "grading_record", "read_record"]

METADATA_KEY = "course_grading"


def grading_record(evaluation: Evaluation, note: str = "") -> dict[str, str]:
    """What the hooks write under ``METADATA_KEY``; `note` says where the answer was found."""
    outcome, detail = evaluation.outcome()
    if not detail:  # graded to the end: points, time, sandbox or not
        where = "dans le bac à sable" if evaluation.sandboxed else "sans bac à sable"
        detail = (
            f"Noté\u00a0: {evaluation.score}/{evaluation.max_score} points aux tests "
            f"automatiques, en {french_number(evaluation.seconds, 1)}\u00a0s, {where}."
        )
    return {"outcome": outcome.value, "detail": f"{note} {detail}" if note else detail}


def read_record(metadata: dict[str, Any]) -> tuple[str, str]:
    """(outcome, detail) a notebook's metadata holds; ("graded", "") when it says nothing."""
    meta = metadata.get(METADATA_KEY) or {}
    return str(meta.get("outcome") or Outcome.GRADED.value), str(meta.get("detail") or "")
