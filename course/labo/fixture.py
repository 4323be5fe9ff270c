"""The lab's fixture database: several learners, two apps, app state, personal data markers.

Built once per machine (per Unix user and per version of this file) with the course's own
session service and tutor, then copied for every grading run: each run starts from the same
bytes. ``python -I -m course.labo.fixture PATH`` builds it in a clean interpreter.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

__all__ = ["AUTRE_APP", "MARKERS", "build", "fixture_path"]

AUTRE_APP = "agenda"
# Personal data only alice (in the tutor's app) has: none of it may stay readable in the file.
_Popen = subprocess.Popen  # captured at import: later monkeypatching does not reach it
MARKERS = {
    "alice": ("Alice Martin", "alice.martin@exemple.fr", "06 12 34 56 78"),
}


async def _say(service, session, author: str, text: str, delta: dict | None = None):
    from course.events import Content, Event, EventActions, Part

    role = "user" if author == "user" else "model"
    event = Event(
        author=author,
        invocation_id=f"inv-{session.id[:8]}-{len(session.events)}",
        content=Content(role=role, parts=[Part(text=text)]),
        actions=EventActions(state_delta=delta or {}),
    )
    return await service.append_event(session=session, event=event)


async def _build(path: Path) -> None:
    from course.sessions import SqliteSessionService
    from course.tuteur import APP_NAME, demo

    async with SqliteSessionService(path) as svc:
        # alice: the seed's two demo sessions (20 and 2 events), then a profile with personal data.
        await demo(svc)
        s = await svc.create_session(app_name=APP_NAME, user_id="alice",
                                     state={"app:programme": "python-2026"})
        await _say(svc, s, "user", "Je m'appelle Alice Martin, écrivez-moi à "
                   "alice.martin@exemple.fr ou au 06 12 34 56 78.",
                   {"user:nom_complet": "Alice Martin", "user:courriel": "alice.martin@exemple.fr"})
        await _say(svc, s, "tuteur", "Merci Alice, c'est noté.")
        # bob: one session and his own progression.
        s = await svc.create_session(app_name=APP_NAME, user_id="bob")
        await _say(svc, s, "user", "Bonjour, ici Bob Durand.",
                   {"user:progression": {"python": {"niveau": 2, "bonnes": 1, "total": 2}}})
        await _say(svc, s, "tuteur", "Bonjour Bob, reprenons au niveau 2.")
        s = await svc.create_session(app_name=APP_NAME, user_id="bob")
        await _say(svc, s, "user", "Je reviens pour les listes.", {"user:dernier_sujet": "listes"})
        # a learner whose id holds quotes, the classic trap for SQL built by string formatting.
        s = await svc.create_session(app_name=APP_NAME, user_id="o'connor")
        await _say(svc, s, "user", "Bonjour, je suis Sean O'Connor.",
                   {"user:progression": {"python": {"niveau": 1}}})
        # chloé: progression only (her sessions were removed earlier through the API).
        s = await svc.create_session(app_name=APP_NAME, user_id="chloé",
                                     state={"user:progression": {"python": {"niveau": 3}}})
        await svc.delete_session(app_name=APP_NAME, user_id="chloé", session_id=s.id)
        # another app of the same school: alice and bob exist there too and must stay.
        for user in ("alice", "bob"):
            s = await svc.create_session(app_name=AUTRE_APP, user_id=user,
                                         state={"app:fuseau": "Europe/Paris"})
            await _say(svc, s, "user", "Rendez-vous mardi à 10 h.", {"user:theme": "sombre"})


def build(path: str | os.PathLike[str]) -> Path:
    """Build the fixture at ``path`` (which must not exist)."""
    path = Path(path)
    if path.exists():
        raise FileExistsError(f"{path} existe déjà : la base d'exemple se construit dans un "
                              "fichier neuf.")
    asyncio.run(_build(path))
    return path


def _key() -> str:
    here = Path(__file__).resolve()
    digest = hashlib.sha256(here.read_bytes())
    for name in ("demonstration.py", "questions.py", "modele.py"):
        other = here.parent.parent / "tuteur" / name
        if other.exists():
            digest.update(other.read_bytes())
    return digest.hexdigest()[:16]


def fixture_path() -> Path:
    """Path of the cached fixture, built in a clean interpreter the first time."""
    user = os.getuid() if hasattr(os, "getuid") else os.environ.get("USERNAME", "eleve")
    folder = Path(tempfile.gettempdir()) / f"course-labo-{user}"
    target = folder / f"fixture-{_key()}.db"
    if target.exists():
        return target
    folder.mkdir(mode=0o700, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=folder))
    try:
        built = tmp / "fixture.db"
        proc = _Popen([sys.executable, "-I", "-m", "course.labo.fixture", str(built)],
                      stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                      text=True)
        try:
            _, stderr = proc.communicate(timeout=120)
        finally:
            proc.kill()
            proc.wait()
        if proc.returncode != 0 or not built.exists():
            raise RuntimeError("Impossible de construire la base d'exemple du labo :\n"
                               + stderr[-2000:])
        os.chmod(built, 0o444)
        os.replace(built, target)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return target


if __name__ == "__main__":
    build(sys.argv[1])
