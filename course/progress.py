"""The course remembers the learner: their path, in a file of their own, written by the
course's own session service.

Why its own session service: the course practises what it teaches. Each quiz answer, each
exercise passed, each hint asked and each ``verifier`` run is appended as an event (ADK's
``Event``, ``custom_metadata``) to the learner's own file, through the course's
``SqliteSessionService``: one session per step of the path (``"02"``, ``"tp"``), ``app_name``
``"cours"`` (the tutor's is ``"tuteur"``), the learner's login as ``user_id``, and a ``user:`` key
(the last step opened), so that a user_states row holds the learner too. The file lives in the
learner's home (``~/.cours-memoire-tuteur/progres.db``; ``COURS_PROGRES_DB`` moves it), one per
learner on a hub, and is never sent anywhere.

- ``mon_parcours()``: the start page's view, the path done and what is next;
- ``recommencer("04")``: a lesson's files and its events removed, the rest kept;
- ``await oublier_ma_progression()``: the learner's OWN ``oublier`` from the TP, applied to this
  file, with a control learner that must stay.

Nothing here may break a lesson: a home that cannot be written gives one French warning, and the
lesson goes on with its answers in the kernel only. ``import course`` does no I/O: the file is
opened on first use, and each operation opens and closes its own connection (a learner's
``oublier`` must find no connection of ours on the file).
"""

from __future__ import annotations

import asyncio
import getpass
import html
import os
import shutil
import sqlite3
import sys
import tempfile
import threading
import time
import warnings
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from course.dbfile import PAGE_SIDES, SIDES

from .readable_error import ReadableError
from .system_reason import french_reason

__all__ = [
    "APP_NAME",
    "DB_ENV_VAR",
    "LESSONS",
    "USER_ENV_VAR",
    "Lesson",
    "Parcours",
    "RecommencerImpossible",
    "exercice_reussi",
    "forget_progress",
    "hints_used",
    "lesson_of_quiz",
    "mon_parcours",
    "oublier_ma_progression",
    "progress_path",
    "quiz_answers",
    "quiz_total",
    "recommencer",
    "record",
    "reset_cache",
    "user_id",
]

APP_NAME = "cours"  # the course's own app_name (the tutor's is "tuteur")
DB_ENV_VAR = "COURS_PROGRES_DB"
USER_ENV_VAR = "COURS_PROGRES_USER"  # tests and shared machines; else the hub's or the login
DEFAULT_PATH = Path(".cours-memoire-tuteur") / "progres.db"  # under the home
TIMEOUT = 10.0  # seconds for one read or write of the progress file
# after a file that did not answer (locked by another program): seconds without trying it, so
# that each quiz click does not freeze the kernel TIMEOUT seconds again
RETRY_AFTER = 60.0
CONTROL_USER = "temoin"  # the control learner of oublier_ma_progression


@dataclass(frozen=True)
class Lesson:
    """One step of the path, as the start page lists it (its table « Le parcours »)."""

    key: str  # the progress session's id: "01"…, "tp"
    label: str  # the start page's step: "1", "TP", "annexe"
    title: str
    notebook: str  # relative to the lessons' folder
    quiz_prefix: str | None  # quiz idents of this notebook start with it
    files: tuple[str, ...] = ()  # "x.db*": the databases it leaves in its folder; else a folder
    exercises: tuple[str, ...] = ()  # the functions its exercises ask for
    cluster: str | None = None  # its PostgreSQL cluster (dossier_cluster), held while it runs
    # its notebook's quiz cells (tests/test_progress.py counts them): a score run in a kernel
    # where some were not run (a restart, a partial run) counts those too, never « tout est
    # juste » on two quizzes out of six, nor records two as the step's total
    quizzes: int = 0


# Found by running each lesson in an empty folder (tests/test_progress.py runs one and compares):
# a lesson writes lecon0N.db (with -wal and -shm while open) and its trial copies.
LESSONS: tuple[Lesson, ...] = (
    Lesson("00", "0", "Commencer ici", "00_commencer_ici.ipynb", "l0-", quizzes=2),
    Lesson(
        "01",
        "1",
        "Choisir un service de session",
        "01_choisir_un_service.ipynb",
        "l1-",
        ("lecon01.db*",),
        quizzes=6,
    ),
    Lesson(
        "02",
        "2",
        "Brancher SQLite dans le Runner",
        "02_brancher_sqlite.ipynb",
        "l2-",
        ("lecon02.db*",),  # never tuteur.db: the tutor's own file, the learner's talks
        ("derniere_session_complete",),
        quizzes=6,
    ),
    Lesson(
        "03",
        "3",
        "Ce que contient le fichier",
        "03_ce_que_contient_le_fichier.ipynb",
        "l3-",
        ("lecon03.db*",),
        ("requete_niveau",),
        quizzes=8,
    ),
    Lesson(
        "04",
        "4",
        "Effacer un élève\u00a0: les faits",
        "04_effacer_un_eleve.ipynb",
        "l4-",
        (
            "lecon04.db*",
            "essai_fk.db*",
            "essai_fk_on.db*",
            "essai_pages.db*",
            "essai_secure.db*",
            "essai_transaction.db*",
        ),
        quizzes=9,
    ),
    Lesson(
        "05",
        "5",
        "Reprendre après un redémarrage",
        "05_reprendre_apres_redemarrage.ipynb",
        "l5-",
        ("lecon05.db*",),
        ("messages_de_l_eleve", "supprimer_inactives"),
        quizzes=7,
    ),
    Lesson("tp", "TP", "oublier, le TP noté", "../oublier/oublier.ipynb", None),
    Lesson(
        "07",
        "7",
        "Partager la mémoire entre plusieurs instances",
        "07_partager_la_memoire.ipynb",
        "l7-",
        ("lecon07.db*", "lecon07-instances"),
        ("oublier_conversation",),
        "lecon07-pg",
        quizzes=8,
    ),
    Lesson(
        "08",
        "annexe",
        "Les étapes clés avec google-adk 2.10",
        "08_annexe_adk.ipynb",
        "l6-",  # the annex's quiz keys kept their first name (their shuffled order depends on it)
        ("annexe_adk.db*", "annexe_adk_neuf.db*"),
        quizzes=5,
    ),
)
_BY_KEY = {lesson.key: lesson for lesson in LESSONS}
# files of the TP's folder (../oublier from the lessons): its example base
TP_FILES = ("exemple_oublier.db*",)


def progress_path() -> Path:
    """The learner's progress file: ``$COURS_PROGRES_DB``, else in their home."""
    return Path(os.environ.get(DB_ENV_VAR) or Path.home() / DEFAULT_PATH).expanduser()


def user_id() -> str:
    """The learner: ``$COURS_PROGRES_USER``, the hub's ``$JUPYTERHUB_USER``, else the login."""
    for name in (USER_ENV_VAR, "JUPYTERHUB_USER"):
        if os.environ.get(name):
            return os.environ[name]
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # a uid without a passwd entry
        return f"uid{os.getuid()}" if hasattr(os, "getuid") else "eleve"


def quiz_count(step: str) -> int:
    """The number of quiz cells of step `step`'s notebook (0: a step the course does not list)."""
    lesson = _BY_KEY.get(step)
    return lesson.quizzes if lesson is not None else 0


def lesson_of_quiz(ident: str) -> str | None:
    """The step a quiz belongs to, from its ident (``l2-niveau`` -> ``"02"``)."""
    for lesson in LESSONS:
        if lesson.quiz_prefix and ident.startswith(lesson.quiz_prefix):
            return lesson.key
    return None


# -- the file, through the course's session service ------------------------------------------


def _run(work: Callable[[Any], Coroutine[Any, Any, Any]]) -> Any:
    """``await work(service)`` on the progress file, in a thread of its own: a quiz's click
    arrives inside the kernel's running event loop, where ``asyncio.run`` is refused."""
    from .sessions import SqliteSessionService

    global _stalled_until
    path = progress_path()
    if time.monotonic() < _stalled_until:
        raise TimeoutError(f"le fichier {path} n'a pas répondu récemment")
    result: dict[str, Any] = {}

    async def main() -> None:
        async with SqliteSessionService(path) as service:
            result["value"] = await work(service)

    def target() -> None:
        try:
            asyncio.run(main())
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
            result["error"] = exc

    _prepare_file(path)
    thread = threading.Thread(target=target, name="cours-progres", daemon=True)
    thread.start()
    thread.join(TIMEOUT)
    if thread.is_alive():
        _stalled_until = time.monotonic() + RETRY_AFTER
        raise TimeoutError(f"le fichier {path} n'a pas répondu en {TIMEOUT:.0f}\u00a0s")
    if "error" in result:
        raise result["error"]
    return result.get("value")


def _prepare_file(path: Path) -> None:
    """The folder (private) and the file (readable by its owner only): it holds personal data.

    A file (or a -wal, -shm, -journal beside it) that another account owns is refused: in a
    folder others may write (``COURS_PROGRES_DB`` in /tmp or a shared folder), a classmate who
    made it first would read every answer; one of ours open to others is made private again."""
    if not path.exists():
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        os.close(fd)
    if not hasattr(os, "getuid"):
        return
    for file in (path, *(Path(f"{path}{suffix}") for suffix in SIDES)):
        try:
            found = file.stat()
        except FileNotFoundError:
            continue
        if found.st_uid != os.getuid():
            raise PermissionError(
                f"{file} appartient à un autre compte (uid {found.st_uid})\u00a0: il pourrait "
                "lire votre progression, rien n'y est écrit"
            )
        if found.st_mode & 0o077:
            file.chmod(0o600)


async def _read_events(service: Any, user: str) -> list[tuple[str, dict[str, Any]]]:
    """(step, custom_metadata) of every event of `user`, in time order."""
    found = []
    listed = await service.list_sessions(app_name=APP_NAME, user_id=user)
    for session in listed.sessions:
        full = await service.get_session(app_name=APP_NAME, user_id=user, session_id=session.id)
        for event in full.events if full else ():
            found.append((event.timestamp, session.id, dict(event.custom_metadata or {})))
    return [(step, meta) for _t, step, meta in sorted(found, key=lambda x: x[0])]


async def _append(service: Any, user: str, step: str, meta: dict[str, Any]) -> None:
    from .events import Event, EventActions

    session = await service.get_session(app_name=APP_NAME, user_id=user, session_id=step)
    if session is None:
        session = await service.create_session(app_name=APP_NAME, user_id=user, session_id=step)
    event = Event(
        author="cours",
        invocation_id=f"cours-{step}",
        custom_metadata=meta,
        actions=EventActions(state_delta={"user:derniere_etape": step}),
    )
    await service.append_event(session, event)


_stalled_until = 0.0  # time.monotonic() before which the file is not tried again
_lock = threading.Lock()
_cache: list[tuple[str, dict[str, Any]]] | None = None  # this kernel's copy of the events
_warned = False
# the file that failed at its last use and why (French), None once it works: the start page
# never says « enregistré dans » a file nothing could be written to, nor « inutilisable » of
# another file given since (%env in the notebook)
_failure: tuple[Path, str] | None = None
# a restarted kernel forgets a %env: the variable is given where JupyterLab starts
WHAT_TO_DO = (
    f"pour l'enregistrer, donnez dans {DB_ENV_VAR} le chemin d'un fichier dans un dossier où vous "
    f"pouvez écrire, en lançant JupyterLab ({DB_ENV_VAR}=/votre/dossier/progres.db make lab) ou "
    f"dans le notebook (%env {DB_ENV_VAR}=…, pour ce noyau)"
)


def _reason(exc: BaseException) -> str:
    """Why, in French: an OSError by its number (never « [Errno 13] Permission denied »)."""
    if isinstance(exc, OSError) and exc.errno:
        path = progress_path()
        named = exc.filename and Path(exc.filename) not in (path, path.parent)
        return french_reason(exc) + (f", {exc.filename}" if named else "")
    return str(exc).strip().rstrip(".") or type(exc).__name__


def _warn(exc: BaseException) -> None:
    """One French warning per kernel: the lesson goes on without recording."""
    global _warned, _failure
    _failure = (progress_path(), _unwritten(exc))
    if _warned:
        return
    _warned = True
    print(
        f"Attention\u00a0: votre progression n'est pas enregistrée ({progress_path()}\u00a0: "
        f"{_failure[1]}). La leçon continue\u00a0; vos réponses restent dans ce noyau "
        f"seulement\u00a0; {WHAT_TO_DO}.",
        file=sys.stderr,
    )


def _failed(path: Path) -> str | None:
    """Why `path` failed at its last use; None if it worked, or if the failure was another
    file's (a path given since)."""
    return _failure[1] if _failure is not None and _failure[0] == path else None


def _unwritten(exc: BaseException) -> str:
    """Why the file was not written, in a few words: the service's read-only sentence names
    the path again and blames the file's modes, also for a read-only mount."""
    from .sessions.errors import ReadOnlyDatabaseError

    return "fichier en lecture seule" if isinstance(exc, ReadOnlyDatabaseError) else _reason(exc)


def _worked() -> None:
    """A write went through: the file works (a read alone does not say so: read-only file)."""
    global _failure
    _failure = None


def reset_cache() -> None:
    """Forget this kernel's copy of the events (the next read goes to the file)."""
    global _cache, _stalled_until
    with _lock:
        _cache = None
        _stalled_until = 0.0


# the facts each kind of event must hold, with their types: an event without them (written by
# the learner's own code, a hand edit, another version) is left out, never a KeyError that
# breaks the start page and every hint
_FACTS: dict[str, dict[str, type | tuple[type, ...]]] = {
    "quiz": {"quiz": str},
    "indice": {"echelle": str, "niveau": int},
    "bilan": {"total": int},
    "exercice": {"exercice": str},
    "verifier": {"respectes": int, "criteres": int},
}


def _well_formed(meta: Any) -> bool:
    if not isinstance(meta, dict):
        return False
    needed = _FACTS.get(meta.get("type"), {})  # type: ignore[arg-type]
    return all(
        isinstance(meta.get(key), kind) and not isinstance(meta.get(key), bool)
        for key, kind in needed.items()
    )


def _events() -> list[tuple[str, dict[str, Any]]]:
    """The learner's events, read once per kernel (then kept up to date by ``record``)."""
    global _cache
    with _lock:
        if _cache is None:
            user = user_id()
            try:
                _cache = _run(lambda s: _read_events(s, user))
            except Exception as exc:  # noqa: BLE001 - recording never breaks a lesson
                _warn(exc)
                _cache = []
        return [(step, meta) for step, meta in _cache if _well_formed(meta)]


def record(step: str, kind: str, **facts: Any) -> bool:
    """Append one event (``kind`` and its facts) to step `step`; False if it could not be."""
    meta = {"type": kind, **facts}
    _events()  # the earlier ones first, so that the copy stays complete
    user = user_id()
    try:
        _run(lambda s: _append(s, user, step, meta))
    except Exception as exc:  # noqa: BLE001 - recording never breaks a lesson
        _warn(exc)
        ok = False
    else:
        _worked()
        ok = True
    with _lock:
        if _cache is not None:
            _cache.append((step, meta))
    return ok


def quiz_answers(ident: str) -> list[int]:
    """The options chosen for quiz `ident`, in order, as recorded (survives a restart)."""
    return [
        m["option"]
        for _s, m in _events()
        if m.get("type") == "quiz" and m.get("quiz") == ident and isinstance(m.get("option"), int)
    ]


def quiz_total(step: str) -> int | None:
    """The number of quizzes of step `step`, as its last « bilan » recorded it."""
    totals = [m.get("total") for s, m in _events() if s == step and m.get("type") == "bilan"]
    return totals[-1] if totals else None


def hints_used(ladder: str | None = None) -> set[tuple[str, int]]:
    """The (ladder, level) pairs revealed, for one ladder or all."""
    return {
        (m["echelle"], m["niveau"])
        for _s, m in _events()
        if m.get("type") == "indice" and (ladder is None or m.get("echelle") == ladder)
    }


def exercice_reussi(exercice: str) -> None:
    """Called by an exercise's check cell once it passed: the exercise counts in your path."""
    step = next((lesson.key for lesson in LESSONS if exercice in lesson.exercises), None)
    if step is None:
        raise ValueError(f"Exercice inconnu\u00a0: {exercice!r}.")
    passed = {m.get("exercice") for s, m in _events() if s == step and m.get("type") == "exercice"}
    if exercice not in passed:
        record(step, "exercice", exercice=exercice)


# -- the start page's view -------------------------------------------------------------------


@dataclass(frozen=True)
class StepStatus:
    lesson: Lesson
    started: bool
    done: bool
    detail: str


def _status(lesson: Lesson, events: list[dict[str, Any]]) -> StepStatus:
    if lesson.key == "tp":
        runs = [m for m in events if m.get("type") == "verifier"]
        best = max((m.get("respectes", 0) for m in runs), default=0)
        total = max((m.get("criteres", 7) for m in runs), default=7)
        detail = f"meilleure vérification\u00a0: {best}/{total} critères" if runs else ""
        hints = len({(m["echelle"], m["niveau"]) for m in events if m.get("type") == "indice"})
        if hints:
            detail = "\u00a0; ".join(filter(None, (detail, _hints_text(hints))))
        return StepStatus(lesson, bool(events), bool(runs) and best == total, detail)
    answers: dict[str, list[bool]] = {}
    total = None
    for m in events:
        if m.get("type") == "quiz":
            answers.setdefault(m["quiz"], []).append(bool(m.get("juste")))
        elif m.get("type") == "bilan":
            total = m.get("total")
    passed = {m.get("exercice") for m in events if m.get("type") == "exercice"}
    exercises = [e for e in lesson.exercises if e in passed]
    parts = []
    if answers or total:
        right = sum(first[0] for first in answers.values())
        parts.append(
            f"quiz répondus\u00a0: {len(answers)}{f'/{total}' if total else ''}, justes du "
            f"premier coup\u00a0: {right}"
        )
    if lesson.exercises:
        parts.append(f"exercices réussis\u00a0: {len(exercises)}/{len(lesson.exercises)}")
    hints = len({(m["echelle"], m["niveau"]) for m in events if m.get("type") == "indice"})
    if hints:
        parts.append(_hints_text(hints))
    done = total is not None and len(answers) >= total and len(exercises) == len(lesson.exercises)
    return StepStatus(lesson, bool(events), done, "\u00a0; ".join(parts))


def _hints_text(n: int) -> str:
    return f"{n} indice{'s' if n > 1 else ''} demandé{'s' if n > 1 else ''}"


class Parcours:
    """Votre parcours\u00a0: chaque étape, faite, commencée ou à faire, et la suivante."""

    def __init__(
        self,
        events: list[tuple[str, dict[str, Any]]],
        user: str,
        path: Path,
        failure: str | None = None,
    ) -> None:
        self.user, self.path, self.failure = user, path, failure
        self.steps = [
            _status(lesson, [m for s, m in events if s == lesson.key]) for lesson in LESSONS
        ]

    @property
    def empty(self) -> bool:
        return not any(s.started for s in self.steps)

    @property
    def next(self) -> Lesson | None:
        return next((s.lesson for s in self.steps if not s.done and s.lesson.key != "00"), None)

    def lines(self) -> list[str]:
        head = f"Votre parcours ({self.user}, enregistré dans {self.path})\u00a0:"
        if self.failure is not None:  # nothing could be read nor written there
            head = (
                f"Votre parcours ({self.user}) n'est pas enregistré\u00a0: {self.path} est "
                f"inutilisable ({self.failure})\u00a0; {WHAT_TO_DO}. Dans ce noyau\u00a0:"
            )
        if self.empty:
            return [head, "  rien encore\u00a0: commencez par la leçon 1."]
        out = [head]
        for s in self.steps:
            mark = "✔" if s.done else ("…" if s.started else "·")
            state = "fait" if s.done else ("commencé" if s.started else "à faire")
            detail = f" — {s.detail}" if s.detail else ""
            out.append(f"  {mark} {s.lesson.label}. {s.lesson.title}\u00a0: {state}{detail}")
        following = self.next
        out.append(
            f"Ensuite\u00a0: {following.label}. {following.title} ({following.notebook})."
            if following
            else "Tout le parcours est fait."
        )
        return out

    def __repr__(self) -> str:
        return "\n".join(self.lines())

    def _repr_html_(self) -> str:
        lines = self.lines()
        items = "".join(f"<li>{html.escape(line.strip())}</li>" for line in lines[1:-1])
        return (
            f'<div class="cours-parcours"><p><strong>{html.escape(lines[0])}</strong></p>'
            f"<ul>{items}</ul><p>{html.escape(lines[-1])}</p></div>"
        )


def mon_parcours() -> Parcours:
    """Votre parcours, relu dans votre fichier de progression\u00a0: ce qui est fait, la suite."""
    path = progress_path()
    if _failed(path) is None:  # read the file again (another kernel may have written to it)
        reset_cache()
    # else the file failed: this kernel's own copy is all there is (read again, it is lost)
    events = _events()  # may fail now: the first use of the file
    return Parcours(events, user_id(), path, _failed(path))


# -- start a lesson again ---------------------------------------------------------------------


# what SQLite keeps beside a database file: a lesson's "lecon04.db*" is these, never the learner's
# own "lecon04.db.sauvegarde" nor a folder of theirs
SQLITE_SUFFIXES = ("", *SIDES)


def _lesson_files(lesson: Lesson, folder: Path) -> list[Path]:
    found = []
    for pattern in lesson.files:
        if pattern.endswith(".db*"):  # a database (its glob may name several) and its journals
            for name in (pattern[:-1] + suffix for suffix in SQLITE_SUFFIXES):
                found += [
                    p
                    for p in folder.glob(name)
                    if p.parent == folder and (p.is_symlink() or not p.is_dir())
                ]
        elif (folder / pattern).is_symlink() or (folder / pattern).exists():
            found.append(folder / pattern)  # a folder the lesson makes, by its exact name
    return sorted(set(found))


def _running(cluster: str, folder: Path) -> bool:
    """Whether a kernel still runs the lesson's PostgreSQL cluster in `folder` (its watchdog
    holds the cluster's lock): its files are in use."""
    # the server's module, only for the lesson that has one
    from .postgres import ClusterOccupe, ServeurPostgres, dossier_cluster

    try:
        ServeurPostgres(dossier_cluster(cluster, folder)).verifier_libre()
    except ClusterOccupe:
        return True
    return False


class RecommencerImpossible(ReadableError, ValueError):
    """A lesson recommencer cannot start again (unknown, or still running): one French line in
    the notebook, not the frames of this module."""


class _Removed(list):
    """The names recommencer removed: a list for code; nothing shown under the cell, whose
    printed sentence already says them (« ['lecon03.db'] » came below it)."""

    def _ipython_display_(self) -> None:
        pass


# what a learner may call a TP: the start page's step, and each TP's folder (stop 59:
# recommencer("oublier_partage") answered « Leçon inconnue »)
_TP_NAMES = ("tp", "oublier", "oublier_partage")


def recommencer(lecon: str, dossier: str | os.PathLike[str] = ".") -> list[str]:
    """Recommence une leçon\u00a0: supprime les fichiers qu'elle crée dans `dossier` (le dossier
    des leçons) et ses événements de progression\u00a0; le reste (les autres leçons, le TP) reste.
    Renvoie les noms supprimés."""
    key = str(lecon).strip().lower()
    key = key.zfill(2) if key.isdigit() else key
    lesson = _BY_KEY.get(key)
    if key in _TP_NAMES:
        raise RecommencerImpossible(
            "Un TP ne se recommence pas ainsi\u00a0: son travail est votre cellule oublier (ou "
            "oublier_partage), dans son notebook (notebooks/oublier/oublier.ipynb, "
            "notebooks/oublier_partage/oublier_partage.ipynb), que rien ne supprime ici. Les "
            'leçons se recommencent, par leur numéro\u00a0: recommencer("04").'
        )
    if lesson is None:
        known = ", ".join(f"«\u00a0{k}\u00a0»" for k in _BY_KEY if k != "tp")
        asked = str(lecon) if str(lecon).isprintable() else repr(str(lecon))  # a stray newline
        raise RecommencerImpossible(
            f"Leçon inconnue\u00a0: «\u00a0{asked}\u00a0» (connues\u00a0: {known})."
        )
    folder = Path(dossier)
    if lesson.cluster and _running(lesson.cluster, folder):
        raise RecommencerImpossible(
            f"Leçon {lesson.label} non recommencée\u00a0: elle tourne encore dans un notebook (son "
            "serveur PostgreSQL est en marche), et ses fichiers lui servent. Arrêtez-la d'abord "
            "(sa dernière cellule, ou l'arrêt de son noyau), puis relancez. Rien n'a été "
            "supprimé."
        )
    removed, kept = [], []
    for path in _lesson_files(lesson, folder):
        try:
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink()
        except OSError as exc:  # a read-only folder: said, and the progress still goes
            kept.append(f"{path.name} ({french_reason(exc)})")
            continue
        removed.append(path.name)
    if removed:
        files = f"fichiers supprimés\u00a0: {', '.join(removed)}"
    else:
        files = "aucun fichier supprimé" if kept else "aucun fichier"
    if kept:
        files += f"\u00a0; non supprimé{'s' if len(kept) > 1 else ''}\u00a0: {', '.join(kept)}"
    user = user_id()

    async def forget(service: Any) -> None:
        await service.delete_session(app_name=APP_NAME, user_id=user, session_id=lesson.key)

    failed = None
    if progress_path().exists():
        try:
            _run(forget)
        except Exception as exc:  # noqa: BLE001 - a damaged or locked file: said, not raised
            failed = exc
    reset_cache()
    print(
        f"Leçon {lesson.label} recommencée\u00a0: {files}"
        + (
            f"\u00a0; sa progression n'a pas pu être effacée ({progress_path()}\u00a0: "
            f"{_unwritten(failed)})."
            if failed
            else "\u00a0; sa progression est effacée, celle des autres étapes reste."
        )
        # its open notebook's kernel still holds the deleted files and its answers (stop 59)
        + " Si son notebook est ouvert, redémarrez son noyau (menu Noyau) avant de la reprendre."
    )
    return _Removed(removed)


# -- forget yourself, with your own oublier -----------------------------------------------------


def _counts(path: Path, user: str) -> dict[str, int]:
    """Rows of `user` in each table of the course's app (read-only)."""
    from . import dbfile

    with dbfile.reading(path) as conn:
        return {
            table: conn.execute(
                f"SELECT COUNT(*) FROM {table} WHERE app_name = ? AND user_id = ?",  # noqa: S608
                (APP_NAME, user),
            ).fetchone()[0]
            for table in ("sessions", "events", "user_states")
        }


def _bytes_found(path: Path, text: str) -> int:
    """Occurrences of `text` in the file and in what SQLite keeps beside it: the -wal, and the
    -journal that journal_mode=PERSIST leaves full of the pages as they were before."""
    pattern = text.encode()
    beside = (path, *(Path(f"{path}{suffix}") for suffix in PAGE_SIDES))
    return sum(p.read_bytes().count(pattern) for p in beside if p.is_file())


def _bytes_expected(path: Path, text: str) -> int:
    """How often `text` is in a clean copy of the rows that stay (``VACUUM INTO``, in a private
    temporary folder): the schema's, the control's and the other learners' own bytes. A short
    login (« ed ») or the app's name is found there too, and is not the learner's trace."""
    from . import dbfile

    with tempfile.TemporaryDirectory(prefix="cours-progres-") as folder:
        copy = Path(folder) / "copie.db"
        with dbfile.reading(path) as conn:
            conn.execute("VACUUM INTO :copy", {"copy": str(copy)})
        return _bytes_found(copy, text)


def _unawaited(warned: list[warnings.WarningMessage]) -> str:
    """The learner's service call left without await, in French (the labo's words), in place
    of Python's « coroutine ... was never awaited » ("" if none); any other warning is shown as
    it was."""
    from .labo.criteria import UNAWAITED
    from .labo.left_behind import never_awaited

    unawaited = False
    for w in warned:
        if never_awaited(w):
            unawaited = True
        else:
            warnings.showwarning(w.message, w.category, w.filename, w.lineno, w.file, w.line)
    return f"✘ {UNAWAITED}" if unawaited else ""


def _cancelled_from_outside() -> bool:
    """Whether this task is being cancelled (the cell stopped), not just handed a CancelledError
    the learner's code raised."""
    try:
        task = asyncio.current_task()
    except RuntimeError:  # no event loop: nothing to cancel
        return False
    return task is not None and task.cancelling() > 0


def _print_if(text: str) -> None:
    if text:
        print(text)


def _file_lost(path: Path, exc: Exception) -> str:
    """The verdict when the file cannot be read after the learner's function: it erased or broke
    the whole file, the control and the other learners with it."""
    if not path.exists():
        return (
            f"✘ Le témoin a changé\u00a0: votre fonction a supprimé tout le fichier de "
            f"progression ({path}), le témoin et les autres élèves avec vous. Elle doit effacer "
            "les lignes de l'élève demandé, et rien d'autre."
        )
    why = _reason(exc)
    why = why if str(path) in why else f"{path}\u00a0: {why}"  # the path once
    return (
        f"✘ Le témoin a changé\u00a0: après votre fonction, le fichier de progression ne se lit "
        f"plus ({why}). Elle doit effacer les lignes de l'élève demandé, et rien d'autre."
    )


async def oublier_ma_progression(cellule: str | None = None) -> None:
    """Applique VOTRE fonction oublier (celle du TP, relue dans oublier/oublier.ipynb) à votre
    fichier de progression, avec un élève témoin qui doit rester, et affiche ce qu'il reste
    de vous et du témoin («\u00a0✔ Vous êtes oublié\u00a0» si tout est effacé).

    Votre fonction lit ``APP_NAME``\u00a0: ici, il vaut ``"cours"``, l'application de ce fichier.
    """
    # its verdict is the sentence it prints: no True or False left as the cell's Out[]
    await forget_progress(cellule)


async def forget_progress(cellule: str | None = None) -> bool:
    """``oublier_ma_progression``'s work and its French report; True when the learner is
    forgotten and the control learner intact (the verdict the learner reads)."""
    from .labo.evaluate import extract_source
    from .labo.tp_notebook import OublierCellNotFound, oublier_cell_source
    from .sessions import SqliteSessionService

    try:
        source = cellule if cellule is not None else oublier_cell_source()
    except OublierCellNotFound as reason:
        print(f"✘ {reason}")
        return False
    path, user = progress_path(), user_id()
    if user == CONTROL_USER:
        print(f"✘ Votre identifiant est celui du témoin ({CONTROL_USER})\u00a0: rien n'est fait.")
        return False

    async def add_control(service: Any) -> None:
        await _append(service, CONTROL_USER, "00", {"type": "temoin"})

    try:
        _run(add_control)
        before, control_before = _counts(path, user), _counts(path, CONTROL_USER)
    except Exception as exc:  # noqa: BLE001 - a damaged or locked file: said, not raised
        print(
            f"✘ Votre fichier de progression est inutilisable ({path}\u00a0: {exc})\u00a0: "
            "rien n'est fait."
        )
        return False
    if not any(before.values()):
        print(
            f"✘ Rien de vous dans {path} pour l'instant\u00a0: votre fonction n'aurait rien à "
            "effacer, et ne serait pas mise à l'épreuve. Faites d'abord une leçon (un quiz), "
            "puis relancez."
        )
        return False
    namespace: dict[str, Any] = {
        "__name__": "votre_cellule_oublier",
        "APP_NAME": APP_NAME,
        "sqlite3": sqlite3,
        "SqliteSessionService": SqliteSessionService,
    }
    warned: list[warnings.WarningMessage] = []
    try:
        exec(compile(extract_source(source), "<votre cellule oublier>", "exec"), namespace)  # noqa: S102
        oublier = namespace.get("oublier")
        if oublier is None:
            raise NameError("la cellule ne définit pas oublier")
        async with SqliteSessionService(path) as service:
            # a service call without await (« service.delete_session(...) ») raises nothing: its
            # coroutine is dropped, and Python only warns, in English, when it is freed
            with warnings.catch_warnings(record=True) as warned:
                warnings.simplefilter("always", RuntimeWarning)
                result = oublier(service, user)
                if asyncio.iscoroutine(result):
                    await result
    except BaseException as exc:  # noqa: BLE001 - the learner's code: said, never a traceback
        # (CancelledError, KeyboardInterrupt or SystemExit it raises included); the cell's own
        # cancellation goes on
        if isinstance(exc, asyncio.CancelledError) and _cancelled_from_outside():
            raise
        try:
            said = str(exc).strip()
        except Exception:  # noqa: BLE001 - the learner's exception class: its name is enough
            said = ""
        print(
            f"✘ Votre fonction oublier a levé {type(exc).__name__}" + (said and f"\u00a0: {said}")
        )
        _print_if(_unawaited(warned))
        reset_cache()
        return False
    unawaited = _unawaited(warned)
    reset_cache()
    try:  # the learner's function may have removed or broken the file itself
        after, control_after = _counts(path, user), _counts(path, CONTROL_USER)
        in_bytes = _bytes_found(path, user)
        control_bytes = _bytes_found(path, CONTROL_USER)
        expected_bytes = _bytes_expected(path, user)
    except Exception as exc:  # noqa: BLE001 - said as a verdict, not raised
        print(_file_lost(path, exc))
        _print_if(unawaited)
        return False
    print(f"Votre fichier de progression\u00a0: {path}")
    for table in before:
        print(
            f"  {table:12} vous\u00a0: {before[table]} → {after[table]}\u00a0; témoin\u00a0: "
            f"{control_before[table]} → {control_after[table]}"
        )
    print(
        f"  votre identifiant dans les octets du fichier, du -wal et du -journal\u00a0: "
        f"{in_bytes} fois"
        f"\u00a0; celui du témoin\u00a0: {control_bytes} fois"
    )
    # beyond what a clean copy of the rows that stay holds: the learner's trace (free pages, WAL)
    forgotten = not any(after.values()) and in_bytes <= expected_bytes
    control_kept = control_after == control_before and control_bytes > 0
    if forgotten and control_kept:
        print("✔ Vous êtes oublié, et le témoin est intact\u00a0: la page de départ est vide.")
    elif not control_kept:
        print("✘ Le témoin a changé\u00a0: votre fonction efface plus que l'élève demandé.")
    else:
        print(
            "✘ Il reste de vous des lignes ou des octets\u00a0: votre fonction n'efface pas "
            "tout (relancez verifier dans le TP). Si votre cellule importe APP_NAME elle-même, "
            "elle vise «\u00a0tuteur\u00a0», pas «\u00a0cours\u00a0»."
        )
    _print_if(unawaited)
    return forgotten and control_kept


def _main(argv: list[str]) -> int:
    """``python -m course.progress recommencer 04 [DOSSIER]`` (``make recommencer LECON=04``)."""
    from .french_args import quiet_when_the_reader_leaves  # the command's, not the kernels'

    # `python -m course.progress parcours | head -1`: the rest dropped, no BrokenPipeError
    quiet_when_the_reader_leaves()
    if len(argv) >= 2 and argv[0] == "recommencer":
        try:
            recommencer(argv[1], argv[2] if len(argv) > 2 else ".")
        except ValueError as exc:
            print(exc, file=sys.stderr)
            return 2
        return 0
    if argv == ["parcours"]:
        print(mon_parcours())
        return 0
    print("usage\u00a0: python -m course.progress recommencer NN [DOSSIER] | parcours")
    return 2


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
