"""The hidden tests' inputs: learners added to the example base, and the ids they are called with.

Instructor side only (never installed), so nothing students can read computes their grade.
Each targets a mistake the visible example cannot reveal: ``maelle-b`` (a ``LIKE 'maelle%'``
takes it too), ``maelle`` in the other app, ``d'artagnan`` (another apostrophe than
``o'connor``), and hostile ids: ``"`` (a query quoted with "…"), ``%`` (a LIKE), a SQL comment.
"""

from __future__ import annotations

from course.labo.fixture import OTHER_APP, LearnerSpec, Turn
from course.labo.scenario import Scenario

__all__ = ["HIDDEN", "HIDDEN_LEARNERS"]

_PROGRESSION = {"python": {"niveau": 2, "bonnes": 3, "total": 5, "a_revoir": ["boucles"]}}

HIDDEN_LEARNERS: tuple[LearnerSpec, ...] = (
    LearnerSpec(
        "maelle",
        (
            (
                Turn(
                    "user",
                    "Bonjour, je suis Maëlle Girard, en seconde.",
                    {"user:nom_complet": "Maëlle Girard"},
                ),
                Turn("tuteur", "Bienvenue Maëlle, commençons par les boucles.", {}),
                Turn("user", "for i in range(3): print(i)", {"user:progression": _PROGRESSION}),
            ),
            (
                Turn(
                    "user",
                    "Écrivez-moi à maelle.girard@exemple.org ou au 07 65 43 21 09.",
                    {"user:courriel": "maelle.girard@exemple.org"},
                ),
                Turn("tuteur", "C'est noté, Maëlle Girard.", {}),
            ),
        ),
    ),
    LearnerSpec(
        "maelle-b",
        ((Turn("user", "Ici l'autre Maëlle, en première.", {"user:niveau": 3}),),),
    ),
    LearnerSpec(
        "d'artagnan",
        (
            (
                Turn("user", "Un pour tous, tous pour un.", {"user:progression": _PROGRESSION}),
                Turn("tuteur", "Reprenons les boucles.", {}),
            ),
        ),
    ),
    LearnerSpec(
        "maelle",
        ((Turn("user", "Rappel\u00a0: contrôle jeudi.", {"user:theme": "clair"}),),),
        app_name=OTHER_APP,
    ),
)

HIDDEN = Scenario(
    name="hidden",
    hidden=True,
    learner="maelle",
    personal_data=("Girard", "maelle.girard@exemple.org", "07 65 43 21 09"),
    unknown="personne-7",
    quoted="d'artagnan",
    hostile=('d" OR "1"="1', "%", "maelle' --"),
    extra_learners=HIDDEN_LEARNERS,
)
