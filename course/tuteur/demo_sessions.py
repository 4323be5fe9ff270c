"""The lessons' two demonstration sessions for alice, replayed through any service.

First session: greeting, level 3, three answers (two right, then the decorator question
wrong), goodbye: 20 events. Second session: « Bonjour » and the greeting at level 4: 2 events.
Lesson 2 and `python -m course.tuteur demo` replay them; lessons 3 to 5 read what they leave.
"""

from __future__ import annotations

from typing import Any

from ..app import APP_NAME
from ..readable_error import ReadableError
from .agent import Tuteur
from .runner import Runner, message

__all__ = ["DEMO_USER", "DEMO_SESSIONS", "DemoRefusee", "demo"]

DEMO_USER = "alice"
DEMO_SESSIONS: tuple[tuple[str, ...], ...] = (
    ("Bonjour", "3", "[0, 2, 4]", "with", "#", "Au revoir"),
    ("Bonjour",),
)


class DemoRefusee(ReadableError, ValueError):
    """The demo asked of a learner who has data already: one French line in a notebook (a
    lesson's cell run twice showed the course's traceback)."""


async def demo(service: Any, *, user_id: str = DEMO_USER) -> tuple[str, str]:
    """Rejoue les deux sessions de démonstration ; renvoie (id de la première, id de la seconde).

    Refuse un élève qui a déjà des sessions ou une progression : la démonstration part d'un
    élève neuf pour donner le résultat de la leçon (niveau 4, 2 bonnes réponses sur 3), et
    n'écrase jamais les données de personne.
    """
    existing = await service.list_sessions(app_name=APP_NAME, user_id=user_id)
    if existing.sessions or await _has_user_state(service, user_id):
        raise DemoRefusee(
            f"L'élève «\u00a0{user_id}\u00a0» a déjà des données dans ce service\u00a0: la "
            "démonstration part d'un élève neuf. Dans une leçon, réexécutez-la depuis sa "
            "première cellule, qui repart d'une base neuve\u00a0; sinon, choisissez un autre "
            "fichier."
        )
    runner = Runner(agent=Tuteur(), app_name=APP_NAME, session_service=service)
    ids = []
    for texts in DEMO_SESSIONS:
        session = await service.create_session(app_name=APP_NAME, user_id=user_id)
        for text in texts:
            async for _ in runner.run_async(
                user_id=user_id, session_id=session.id, new_message=message(text)
            ):
                pass
        ids.append(session.id)
    return ids[0], ids[1]


async def _has_user_state(service: Any, user_id: str) -> bool:
    try:
        return bool(await service.get_user_state(app_name=APP_NAME, user_id=user_id))
    except NotImplementedError:  # a service that cannot tell: sessions were checked already
        return False
