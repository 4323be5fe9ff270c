"""The sample submissions that attack the grade itself (issue 18: a forged verdict, a leak of
the hidden inputs, a grader starved of memory or disk…), in grader/submissions; each has its
score and reason in attendus.json. One list for the tests that grade them."""

from __future__ import annotations

__all__ = ["GRADE_ATTACKS"]

GRADE_ATTACKS = (
    "verdict_reecrit",
    "verdict_fd",
    "fuite_nom_exception",
    "fuite_au_chargement",
    "processus_memoire",
    "disque_plein",
    "instantane_illisible",
    "expression_profonde",
    "vue_recursive",
    "copie_base64",
    "declencheur",
    "base_attachee",
    # issue 32: the supervisor's frames, copies beside the base or in its free pages, a forged
    # async-ness
    "fuite_pile_superviseur",
    "copie_journal",
    "copie_pages_libres",
    "asynchrone_de_facade",
)
