"""How the grading of one submission ended: the vocabulary the hooks record in each autograded
notebook and the class report reads back, with its French words in one table (the short state of
the report's spreadsheet, the sentence that tells the teacher why). ``Evaluation.outcome`` and
``PartageEvaluation.outcome`` say which one applies; the report adds the two ends that no grading
records (a submission nbgrader did not grade, a student who handed nothing in)."""

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
    # the class report's own: never in a graded notebook
    NOT_GRADED = "not_graded"  # handed in, no graded copy (nbgrader failed on it)
    NO_SUBMISSION = "no_submission"

    @property
    def label(self) -> str:
        """French, the state in the class report."""
        return _FRENCH[self][0]

    @property
    def why(self) -> str:
        """French, why the grade is what it is, said to the teacher ("" when graded)."""
        return _FRENCH[self][1]


_FRENCH = {
    Outcome.GRADED: ("noté", ""),
    Outcome.NOT_WRITTEN: (
        "oublier n'est pas écrite",
        "oublier n'est pas écrite\u00a0: l'élève a rendu l'ébauche telle quelle",
    ),
    Outcome.TIMEOUT: (
        "limite de temps dépassée",
        "le code de l'élève a dépassé la limite de temps (boucle sans fin ou attente)",
    ),
    Outcome.CRASH: (
        "le code s'est arrêté en erreur",
        "le code de l'élève s'est arrêté sur une erreur",
    ),
    Outcome.LOAD_ERROR: (
        "la cellule ne se charge pas",
        "la cellule de l'élève ne se charge pas (erreur de syntaxe ou au chargement)",
    ),
    Outcome.NOT_GRADED: (
        "pas de copie notée",
        "pas de copie notée\u00a0: la notation a échoué (voir rapport/autograde.log)",
    ),
    Outcome.NO_SUBMISSION: ("pas de rendu", "pas de rendu"),
}
# What the hooks may record in a graded notebook
OUTCOMES = tuple(o.value for o in Outcome if o not in (Outcome.NOT_GRADED, Outcome.NO_SUBMISSION))
