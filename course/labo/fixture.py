"""The lab's fixture database: several learners, two apps, app state, personal data markers.

Built once per process with the course's own session service and tutor, in a fresh private
folder, then kept in memory (with its SHA-256): every grading run starts from the same bytes, and
no file on disk, which a submission could rewrite, is ever trusted.
``python -I -m course.labo.fixture PATH`` builds it in a clean interpreter.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

__all__ = ["AUTRE_APP", "MARKERS", "build", "fixture_bytes", "write_fixture"]

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
        s = await svc.create_session(
            app_name=APP_NAME, user_id="alice", state={"app:programme": "python-2026"}
        )
        await _say(
            svc,
            s,
            "user",
            "Je m'appelle Alice Martin, écrivez-moi à "
            "alice.martin@exemple.fr ou au 06 12 34 56 78.",
            {"user:nom_complet": "Alice Martin", "user:courriel": "alice.martin@exemple.fr"},
        )
        await _say(svc, s, "tuteur", "Merci Alice, c'est noté.")
        # bob: one session and his own progression.
        s = await svc.create_session(app_name=APP_NAME, user_id="bob")
        await _say(
            svc,
            s,
            "user",
            "Bonjour, ici Bob Durand.",
            {"user:progression": {"python": {"niveau": 2, "bonnes": 1, "total": 2}}},
        )
        await _say(svc, s, "tuteur", "Bonjour Bob, reprenons au niveau 2.")
        s = await svc.create_session(app_name=APP_NAME, user_id="bob")
        await _say(svc, s, "user", "Je reviens pour les listes.", {"user:dernier_sujet": "listes"})
        # a learner whose id holds quotes, the classic trap for SQL built by string formatting.
        s = await svc.create_session(app_name=APP_NAME, user_id="o'connor")
        await _say(
            svc,
            s,
            "user",
            "Bonjour, je suis Sean O'Connor.",
            {"user:progression": {"python": {"niveau": 1}}},
        )
        # chloé: progression only (her sessions were removed earlier through the API).
        s = await svc.create_session(
            app_name=APP_NAME,
            user_id="chloé",
            state={"user:progression": {"python": {"niveau": 3}}},
        )
        await svc.delete_session(app_name=APP_NAME, user_id="chloé", session_id=s.id)
        # another app of the same school: alice and bob exist there too and must stay.
        for user in ("alice", "bob"):
            s = await svc.create_session(
                app_name=AUTRE_APP, user_id=user, state={"app:fuseau": "Europe/Paris"}
            )
            await _say(svc, s, "user", "Rendez-vous mardi à 10 h.", {"user:theme": "sombre"})


def build(path: str | os.PathLike[str]) -> Path:
    """Build the fixture at ``path`` (which must not exist)."""
    path = Path(path)
    if path.exists():
        raise FileExistsError(
            f"{path} existe déjà : la base d'exemple se construit dans un fichier neuf."
        )
    asyncio.run(_build(path))
    return path


_lock = threading.Lock()
_built: tuple[bytes, str] | None = None  # (bytes, SHA-256), held by this process only


def _build_private() -> bytes:
    """Build the fixture in a clean interpreter, in a new private folder (0700), and read it."""
    folder = Path(tempfile.mkdtemp(prefix="course-labo-base-"))
    os.chmod(folder, 0o700)
    try:
        built = folder / "fixture.db"
        proc = _Popen(
            [sys.executable, "-I", "-m", "course.labo.fixture", str(built)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            _, stderr = proc.communicate(timeout=120)
        finally:
            proc.kill()
            proc.wait()
        if proc.returncode != 0 or not built.exists():
            raise RuntimeError(
                "Impossible de construire la base d'exemple du labo :\n" + stderr[-2000:]
            )
        return built.read_bytes()
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def fixture_bytes() -> tuple[bytes, str]:
    """The fixture's bytes and their SHA-256, built once per process and kept in memory.

    Never read back from a shared cache: student code runs with the grader's Unix rights and
    could rewrite any file, so every grading run copies these bytes (and the checker compares
    with them) instead of trusting a file on disk.
    """
    global _built
    with _lock:
        if _built is None:
            data = _build_private()
            _built = (data, hashlib.sha256(data).hexdigest())
        return _built


def write_fixture(target: str | os.PathLike[str]) -> Path:
    """Write a fresh copy of the fixture at `target` (replaced if it exists)."""
    target = Path(target)
    data, _digest = fixture_bytes()
    target.unlink(missing_ok=True)
    with open(target, "xb") as out:
        out.write(data)
    return target


if __name__ == "__main__":
    build(sys.argv[1])
