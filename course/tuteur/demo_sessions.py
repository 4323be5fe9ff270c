"""The lessons' two demonstration sessions for alice, replayed through any service.

First session: greeting, level 3, three answers (two right, then the decorator question
wrong), goodbye: 20 events. Second session: « Bonjour » and the greeting at level 4: 2 events.
Lesson 2 and `python -m course.tuteur demo` replay them; lessons 3 to 5 read what they leave.
"""

from __future__ import annotations

from typing import Any

from ..app import APP_NAME
from .agent import Tuteur
from .runner import Runner, message

__all__ = ["DEMO_USER", "DEMO_SESSIONS", "demo"]

DEMO_USER = "alice"
DEMO_SESSIONS: tuple[tuple[str, ...], ...] = (
    ("Bonjour", "3", "[0, 2, 4]", "with", "#", "Au revoir"),
    ("Bonjour",),
)


async def demo(service: Any, *, user_id: str = DEMO_USER) -> tuple[str, str]:
    """Rejoue les deux sessions de démonstration ; renvoie (id de la première, id de la seconde).

    Refuse un élève qui a déjà des sessions ou une progression : la démonstration part d'un
    élève neuf pour donner le résultat de la leçon (niveau 4, 2 bonnes réponses sur 3), et
    n'écrase jamais les données de personne.
    """
    existing = await service.list_sessions(app_name=APP_NAME, user_id=user_id)
    if existing.sessions or await _has_user_state(service, user_id):
        raise ValueError(
            f"L'élève « {user_id} » a déjà des données dans ce service : la démonstration "
            "demande une base neuve (choisissez un autre fichier)."
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
