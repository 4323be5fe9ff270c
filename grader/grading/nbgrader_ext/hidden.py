"""The hidden tests' inputs: learners added to the example base, and the ids they are called with.

Instructor side only (``grader/``, never installed): with these, the TP's criteria are judged on
learners and inputs that students never see, so that nothing they can read or import computes
their final grade. Each input targets a mistake the visible example cannot reveal:

- ``maelle``: the learner to erase, with her own personal data, a second learner whose id starts
  like hers (``maelle-b``: a ``LIKE 'maelle%'`` takes her too), and the same id in the other app;
- ``d'artagnan``: an apostrophe elsewhere in the id than in ``o'connor``;
- hostile ids: double quotes (a query quoted with "…" instead of '…'), ``%`` (a LIKE), and a SQL
  comment that drops the app_name condition.
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
