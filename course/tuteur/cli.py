"""Command line of the tutor: talk to it in a terminal, with its memory in a SQLite file.

    python -m course.tuteur --user alice [--reprendre] [--db PATH]
    python -m course.tuteur demo [--db PATH]

The database defaults to $TUTEUR_DB, else `tuteur.db`. Every event is stored as soon as it
happens, so an interrupted session (Ctrl-C, end of input) loses nothing already said.
Exit codes: 0 done, 1 database or demo error, 2 bad usage, 130 interrupted by Ctrl-C.
"""

from __future__ import annotations

import argparse
import asyncio
import sqlite3
import sys
from pathlib import Path
from typing import Any

from .. import app, dbfile
from ..app import APP_NAME
from ..french_args import FrenchArgumentParser
from .agent import Tuteur
from .demo_sessions import DEMO_USER, demo
from .model import is_farewell
from .runner import Runner, message

__all__ = ["check_db_path", "main"]

EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130

PROG = "python -m course.tuteur"
# Both ways to run the tutor, aligned under the « usage : » prefix (8 characters) that --help
# and a usage error print: a session with --user, and the `demo` subcommand (its own --help)
USAGE = (
    "%(prog)s [-h] --user NOM [--reprendre] [--db FICHIER]\n"
    "        %(prog)s demo [-h] [--db FICHIER]"
)
EPILOG = (
    "Sous-commande\u00a0: «\u00a0demo\u00a0» rejoue les deux sessions de démonstration "
    "d'alice dans la base (python -m course.tuteur demo --help pour ses options)."
)


def check_db_path(path: str) -> Path:
    """The --db path once ``dbfile.check_location`` accepts it (nothing is written before)."""
    if not str(path).strip():
        raise dbfile.DbFileError("Chemin de base vide : donnez un fichier avec --db.")
    return dbfile.check_location(Path(path).expanduser())


def _open_service(path: Path) -> Any:
    from course.sessions import SqliteSessionService

    return SqliteSessionService(str(path))


def _say(text: str = "", *, err: bool = False) -> None:
    print(text, file=sys.stderr if err else sys.stdout, flush=True)


def _show(event: Any) -> None:
    for part in (event.content.parts or []) if event.content else []:
        if part.function_call is not None:
            args = ", ".join(f"{k}={v!r}" for k, v in (part.function_call.args or {}).items())
            _say(f"  [outil] {part.function_call.name}({args})")
        elif part.function_response is not None:
            status = (part.function_response.response or {}).get("statut", "?")
            _say(f"  [outil] {part.function_response.name} -> {status}")
        elif part.text and event.author != "user":
            _say(f"tuteur> {part.text}")


def _read(prompt: str) -> str:
    print(prompt, end="", flush=True)
    line = sys.stdin.readline()
    if not line:
        raise EOFError
    try:
        line.encode("utf-8")  # bytes that are not UTF-8 arrive as lone surrogates
    except UnicodeEncodeError:
        raise UnicodeError("entrée pas en UTF-8") from None
    if not sys.stdin.isatty():  # piped input: echo it so the transcript reads like a dialogue
        print(line.rstrip("\n"), flush=True)
    return line.rstrip("\n")


def _run_session(user: str, resume: bool, db: Path) -> int:
    loop = asyncio.new_event_loop()
    service = session_id = None
    try:
        service = _open_service(db)
        sessions = loop.run_until_complete(
            service.list_sessions(app_name=APP_NAME, user_id=user)
        ).sessions
        if resume and sessions:
            session_id = sessions[-1].id
            _say(f"Reprise de la session {session_id}")
            full = loop.run_until_complete(
                service.get_session(app_name=APP_NAME, user_id=user, session_id=session_id)
            )
            events = full.events if full is not None else []
            said = [e for e in events if e.author != "user" and e.content and e.content.parts]
            texts = [p.text for e in said for p in e.content.parts if p.text]
            if texts:
                _say(f"tuteur> {texts[-1]}")
        else:
            if resume:
                _say(
                    f"Aucune session précédente pour « {user} » : je commence une nouvelle session."
                )
            session = loop.run_until_complete(
                service.create_session(app_name=APP_NAME, user_id=user)
            )
            session_id = session.id
            _say(f"Nouvelle session {session_id} pour {user}.")
        _say("Écris ta réponse puis Entrée ; « au revoir » pour terminer.")
        runner = Runner(agent=Tuteur(), app_name=APP_NAME, session_service=service)
        while True:
            try:
                text = _read(f"{user}> ")
            except EOFError:
                _say(
                    f"\nFin de l'entrée : session {session_id} arrêtée. Tout ce qui a été dit "
                    "est enregistré ; reprends-la avec --reprendre."
                )
                return EXIT_OK
            except UnicodeError:
                _say("Entrée illisible (pas en UTF-8) : ligne ignorée.", err=True)
                continue
            if not text.strip():
                _say("Réponse vide : écris ta réponse, ou « au revoir » pour terminer.")
                continue
            loop.run_until_complete(_turn(runner, user, session_id, text))
            if is_farewell(text):
                return EXIT_OK
    except KeyboardInterrupt:
        _cancel_pending(loop)
        where = f" (session {session_id})" if session_id else ""
        _say(
            f"\nInterrompu (Ctrl-C) : ce qui était déjà dit est enregistré{where} ; "
            "reprends avec --reprendre.",
            err=True,
        )
        return EXIT_INTERRUPTED
    except (sqlite3.Error, ValueError, OSError) as exc:
        _say(f"Erreur avec la base « {db} » : {exc}", err=True)
        return EXIT_ERROR
    finally:
        try:
            if service is not None:
                loop.run_until_complete(service.close())
        finally:
            loop.close()


async def _turn(runner: Runner, user: str, session_id: str, text: str) -> None:
    async for event in runner.run_async(
        user_id=user, session_id=session_id, new_message=message(text)
    ):
        _show(event)


def _cancel_pending(loop: asyncio.AbstractEventLoop) -> None:
    """Stop a turn cut by Ctrl-C; events appended before it stay in the file."""
    pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
    for task in pending:
        task.cancel()
    if pending:
        loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))


def _run_demo(db: Path) -> int:
    async def replay() -> tuple[str, list[int]]:
        service = _open_service(db)
        try:
            ids = await demo(service)
            counts = []
            for sid in ids:
                s = await service.get_session(app_name=APP_NAME, user_id=DEMO_USER, session_id=sid)
                counts.append(len(s.events))
            return " / ".join(ids), counts
        finally:
            await service.close()

    try:
        ids, counts = asyncio.run(replay())
    except (sqlite3.Error, ValueError, OSError) as exc:
        _say(f"Erreur : {exc}", err=True)
        return EXIT_ERROR
    _say(
        f"Démonstration rejouée dans {db} pour {DEMO_USER} : sessions {ids}, "
        f"{counts[0]} puis {counts[1]} événements."
    )
    _say(f"Regardez le fichier : python -m course.inspecter {db}")
    return EXIT_OK


def _add_db_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--db",
        metavar="FICHIER",
        default=app.default_db_path(),
        help=f"fichier SQLite (défaut : ${app.DB_ENV_VAR}, sinon {app.DEFAULT_DB})",
    )


def main(argv: list[str] | None = None) -> int:
    """Entry point of `python -m course.tuteur`; returns the exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["demo"]:
        parser = FrenchArgumentParser(
            prog=f"{PROG} demo",
            description="Rejoue les deux sessions de démonstration d'alice.",
        )
        _add_db_argument(parser)
        opts = parser.parse_args(args[1:])
    else:
        parser = FrenchArgumentParser(
            prog=PROG,
            usage=USAGE,
            description="Tuteur de Python hors ligne, avec mémoire SQLite.",
            epilog=EPILOG,
        )
        parser.add_argument("--user", metavar="NOM", help="identifiant de l'élève (obligatoire)")
        parser.add_argument(
            "--reprendre",
            action="store_true",
            help="reprendre la dernière session au lieu d'en créer une",
        )
        _add_db_argument(parser)
        opts = parser.parse_args(args)
        if opts.user is None or not opts.user.strip():
            parser.fail("indiquez l'élève avec --user NOM (non vide)")
    try:
        db = check_db_path(opts.db)
    except dbfile.DbFileError as exc:
        _say(f"Erreur : {exc}", err=True)
        return EXIT_ERROR
    if args[:1] == ["demo"]:
        return _run_demo(db)
    return _run_session(opts.user.strip(), opts.reprendre, db)
