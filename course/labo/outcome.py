"""How the grading of one submission ended: the vocabulary the hooks record in each autograded
notebook and the class report reads back, with the French label the report shows when no
detail was recorded. ``Evaluation.outcome`` says which one applies."""

from __future__ import annotations

from enum import StrEnum

__all__ = ["OUTCOMES", "Outcome"]


class Outcome(StrEnum):
    """One way a submission's grading ended (its value is what the notebook's metadata holds)."""

    GRADED = "graded"
    NOT_WRITTEN = "not_written"
    TIMEOUT = "timeout"
    CRASH = "crash"
    LOAD_ERROR = "load_error"

    @property
    def label(self) -> str:
        """French, for the class report."""
        return _LABELS[self]


_LABELS = {
    Outcome.GRADED: "noté",
    Outcome.NOT_WRITTEN: "oublier n'est pas écrite",
    Outcome.TIMEOUT: "limite de temps dépassée",
    Outcome.CRASH: "le code s'est arrêté en erreur",
    Outcome.LOAD_ERROR: "la cellule ne se charge pas",
}
OUTCOMES = tuple(o.value for o in Outcome)
