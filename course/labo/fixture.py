"""The TP's example database: several learners, two apps, app state, personal data.

Built once per process with the course's own session service and tutor, in a fresh private
folder, then kept in memory (with its SHA-256): every grading run starts from the same bytes, and
no file on disk, which a submission could rewrite, is ever trusted. Learners can be added to it
(``LearnerSpec``): the grader's hidden tests use a base with learners students never see.
The same base can be written by google-adk 2.10's own ``SqliteSessionService`` (``backend="adk"``):
the ADK appendix checks a learner's ``oublier`` on a file that ADK wrote.
``python -I -m course.labo.fixture PATH [course|adk] < LEARNERS.json`` builds it in a clean
interpreter.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from course.app import APP_NAME

__all__ = [
    "ALICE_PERSONAL_DATA",
    "BACKENDS",
    "OTHER_APP",
    "LearnerSpec",
    "Turn",
    "base_exemple",
    "build",
    "fixture_bytes",
    "write_fixture",
]

OTHER_APP = "agenda"
# Which session service writes the base: the course's, or google-adk 2.10's SqliteSessionService.
BACKENDS = ("course", "adk")
# Personal data only alice (in the tutor's app) has: none of it may stay readable in the file.
ALICE_PERSONAL_DATA = ("Alice Martin", "alice.martin@exemple.fr", "06 12 34 56 78")
_Popen = subprocess.Popen  # captured at import: later monkeypatching does not reach it


@dataclass(frozen=True)
class Turn:
    """One message of a session: its author (``user`` or the tutor) and its state changes."""

    author: str
    text: str
    state_delta: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class LearnerSpec:
    """A learner added to the base: each session is a sequence of turns."""

    user_id: str
    sessions: tuple[tuple[Turn, ...], ...]
    app_name: str = APP_NAME

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> LearnerSpec:
        sessions = tuple(tuple(Turn(**t) for t in s) for s in data["sessions"])
        return cls(data["user_id"], sessions, data["app_name"])


async def _say(service, session, author: str, text: str, delta: dict | None = None):
    from course.tuteur.compat import event_types_for

    types = event_types_for(service)  # ADK's service stores ADK's own classes
    role = "user" if author == "user" else "model"
    event = types.Event(
        author=author,
        invocation_id=f"inv-{session.id[:8]}-{len(session.events)}",
        content=types.Content(role=role, parts=[types.Part(text=text)]),
        actions=types.EventActions(state_delta=delta or {}),
    )
    return await service.append_event(session=session, event=event)


def open_service(path: Path, backend: str):
    """A session service of `backend` (one of ``BACKENDS``) on the file `path`."""
    if backend == "adk":
        from google.adk.sessions.sqlite_session_service import SqliteSessionService as Adk

        return Adk(str(path))
    if backend == "course":
        from course.sessions import SqliteSessionService

        return SqliteSessionService(path)
    raise ValueError(f"backend inconnu : {backend!r} (connus : {', '.join(BACKENDS)})")


async def _build(path: Path, extra: tuple[LearnerSpec, ...], backend: str = "course") -> None:
    svc = open_service(path, backend)
    try:
        await _fill(svc, extra)
    finally:
        close = getattr(svc, "close", None)  # ADK 2.10's service has none
        if close is not None:
            await close()


async def _fill(svc, extra: tuple[LearnerSpec, ...]) -> None:
    from course.tuteur import demo

    # alice: the seed's two demo sessions (20 and 2 events), then a profile with personal data.
    await demo(svc)
    s = await svc.create_session(
        app_name=APP_NAME, user_id="alice", state={"app:programme": "python-2026"}
    )
    await _say(
        svc,
        s,
        "user",
        "Je m'appelle Alice Martin, écrivez-moi à alice.martin@exemple.fr ou au 06 12 34 56 78.",
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
            app_name=OTHER_APP, user_id=user, state={"app:fuseau": "Europe/Paris"}
        )
        await _say(svc, s, "user", "Rendez-vous mardi à 10 h.", {"user:theme": "sombre"})
    for learner in extra:
        for turns in learner.sessions:
            s = await svc.create_session(app_name=learner.app_name, user_id=learner.user_id)
            for turn in turns:
                await _say(svc, s, turn.author, turn.text, turn.state_delta)


def build(
    path: str | os.PathLike[str], extra: tuple[LearnerSpec, ...] = (), backend: str = "course"
) -> Path:
    """Build the base at ``path`` (which must not exist), with the learners of `extra` added,
    written by the session service of `backend`."""
    path = Path(path)
    if path.exists():
        raise FileExistsError(
            f"{path} existe déjà\u00a0: la base d'exemple se construit dans un fichier neuf."
        )
    asyncio.run(_build(path, extra, backend))
    return path


_lock = threading.Lock()
# (bytes, SHA-256) per set of added learners and backend, held by this process only
_built: dict[str, tuple[bytes, str]] = {}


def _build_private(extra_json: str, backend: str = "course") -> bytes:
    """Build the base in a clean interpreter, in a new private folder (0700), and read it."""
    folder = Path(tempfile.mkdtemp(prefix="course-labo-base-"))
    os.chmod(folder, 0o700)
    try:
        built = folder / "fixture.db"
        proc = _Popen(
            [sys.executable, "-I", "-m", "course.labo.fixture", str(built), backend],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            _, stderr = proc.communicate(extra_json, timeout=120)
        finally:
            proc.kill()
            proc.wait()
        if proc.returncode != 0 or not built.exists():
            raise RuntimeError(
                "Impossible de construire la base d'exemple du TP\u00a0:\n" + stderr[-2000:]
            )
        return built.read_bytes()
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def fixture_bytes(
    extra: tuple[LearnerSpec, ...] = (), backend: str = "course"
) -> tuple[bytes, str]:
    """The base's bytes (with the learners of `extra`, written by `backend`'s service) and their
    SHA-256, built once per process and kept in memory.

    Never read back from a shared cache: a submission run without the sandbox has the grader's
    Unix rights and could rewrite any file, so every grading run copies these bytes (and the
    checker compares with them) instead of trusting a file on disk.
    """
    if backend not in BACKENDS:
        raise ValueError(
            f"backend inconnu\u00a0: {backend!r} (connus\u00a0: {', '.join(BACKENDS)})"
        )
    learners = json.dumps([asdict(learner) for learner in extra], ensure_ascii=False)
    key = f"{backend}:{learners}"
    with _lock:
        if key not in _built:
            data = _build_private(learners, backend)
            _built[key] = (data, hashlib.sha256(data).hexdigest())
        return _built[key]


def write_fixture(target: str | os.PathLike[str]) -> Path:
    """Write a fresh copy of the example base at `target` (replaced if it exists)."""
    target = Path(target)
    data, _digest = fixture_bytes()
    target.unlink(missing_ok=True)
    with open(target, "xb") as out:
        out.write(data)
    return target


def base_exemple(chemin: str | os.PathLike[str] = "exemple_oublier.db") -> Path:
    """Copie la base d'exemple du TP dans `chemin` (remplacée si elle existe) et la renvoie."""
    target = Path(chemin)
    for suffix in ("-wal", "-shm"):
        Path(f"{target}{suffix}").unlink(missing_ok=True)
    return write_fixture(target)


def main(path: str, backend: str = "course") -> int:
    learners = json.loads(sys.stdin.read() or "[]")
    build(path, tuple(LearnerSpec.from_dict(d) for d in learners), backend)
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
