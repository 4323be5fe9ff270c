"""The outcomes of a grading have one vocabulary (course.labo.outcome.Outcome) with their French
words in one table: the hooks record them, partage's call ends map onto them, the class report
shows them."""

from __future__ import annotations

from course.labo.outcome import OUTCOMES, Outcome
from course.labo.partage import CALL_ENDS, OVER_BUDGET
from course.labo.partage_runner import EXIT


def test_every_outcome_has_its_french_state_and_why():
    for outcome in Outcome:
        assert outcome.label and outcome.label == outcome.label.strip(), outcome
        assert bool(outcome.why) is (outcome is not Outcome.GRADED), outcome
    # what the hooks may record: never the report's own two states
    assert set(OUTCOMES) == set(Outcome) - {Outcome.NOT_GRADED, Outcome.NO_SUBMISSION}
    assert Outcome.NO_SUBMISSION.label == "pas de rendu"


def test_every_end_of_a_partage_call_has_its_outcome_and_sentence():
    """Whatever the runner exits with, or the grader stops a call for, is in the one table: an
    Outcome (None when the tests judge the calls) and a French sentence (none for a call that
    ran to its end)."""
    ends = set(EXIT) | {Outcome.TIMEOUT, Outcome.CRASH, *OVER_BUDGET}
    assert ends == set(CALL_ENDS)
    for status, (outcome, sentence) in CALL_ENDS.items():
        assert outcome is None or isinstance(outcome, Outcome), status
        assert bool(sentence) is (status != "ok"), status
        assert sentence == sentence.strip() and sentence[-1:] in ("", "."), status
    # a spent or broken server budget ends the grading as a crash, with its own reason
    assert {CALL_ENDS[s][0] for s in OVER_BUDGET} == {Outcome.CRASH}
    assert CALL_ENDS[Outcome.TIMEOUT][0] is Outcome.TIMEOUT
