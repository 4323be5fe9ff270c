"""Hidden scenarios leak nothing: for every sample submission (the hostile ones included), every
message a feedback page or the class report shows (each criterion's verdict on both scenarios,
the outcome, the load error) holds no hidden input, no sandbox uid and no grading folder. The
control: the samples that try to leak really see the hidden inputs (they raise them, by name)."""

from __future__ import annotations

import pytest
from fuites import hidden_leaks, hidden_values

from course.labo.criteria import KNOWN_ERRORS, _raised
from course.labo.protocol import CallOutcome, RaisedError

pytestmark = pytest.mark.timeout(900)


@pytest.mark.slow
def test_no_feedback_message_holds_a_hidden_input(graded_samples, sample_answers):
    leaks = hidden_leaks()
    seen = {}
    for name in sorted(sample_answers):
        evaluation = graded_samples[name]
        messages = [v.message for c in evaluation.criteria.values() for v in c.values()]
        messages += [evaluation.outcome()[1], evaluation.load_error or ""]
        seen[name] = {m: leaks(m) for m in messages if leaks(m)}
    assert {name: found for name, found in seen.items() if found} == {}


def test_a_hostile_class_name_is_replaced_for_hidden_inputs():
    """The control for the scan: a class name holding a hidden input is shown on the example,
    replaced on the hidden inputs; Python's own names stay."""
    secret = sorted(hidden_values())[0]
    forged = CallOutcome("c", RaisedError(f"Erreur_{secret}", secret))
    assert secret in _raised(forged, hidden=False)
    shown = _raised(forged, hidden=True)
    assert secret not in shown and shown == "De plus, oublier a levé une exception."
    known = CallOutcome("c", RaisedError("OperationalError", secret))
    assert _raised(known, hidden=True) == "De plus, oublier a levé OperationalError."
    assert {"KeyError", "OperationalError", "IntegrityError"} <= KNOWN_ERRORS


SCHEMA_LEAK = """
async def oublier(service, user_id: str) -> None:
    conn = sqlite3.connect(service.db_path)
    try:
        lignes = conn.execute("SELECT user_id FROM sessions").fetchall()
        nom = "_".join(sorted({l[0] for l in lignes})).replace('"', "")
        conn.execute("PRAGMA writable_schema = ON")
        with conn:
            conn.execute(
                "UPDATE sqlite_master SET sql = ? WHERE name = 'events'",
                (f"CREATE TABLE events (cassee {nom} {user_id.replace(chr(34), '')}",),
            )
    finally:
        conn.close()
"""


def test_a_schema_broken_with_the_inputs_shows_no_reason_for_hidden_inputs():
    """SQLite names the broken object in its error: the reason is shown on the example only.
    The control: on the example the reason really quotes what the answer wrote there."""
    from grading.hidden import HIDDEN

    from course.labo.evaluate import evaluate_source
    from course.labo.scenario import VISIBLE

    evaluation = evaluate_source(SCHEMA_LEAK, scenarios=(VISIBLE, HIDDEN), sandboxed=True)
    assert evaluation.score == 0
    visible = evaluation.criteria[VISIBLE.name]["sessions"].message
    assert "la base de données est abîmée après oublier (" in visible and "alice" in visible
    leaks = hidden_leaks()
    for verdict in evaluation.criteria[HIDDEN.name].values():
        assert leaks(verdict.message) == [], verdict.message
        assert "abîmée après oublier\u00a0: il faut" in verdict.message
