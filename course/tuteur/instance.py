"""Tutor instances, each its own process, as web servers behind a load balancer would run them.

``python -m course.tuteur.instance --sqlite-dir DIR NAME:IN_FD:OUT_FD …`` imports
ADK once, then forks one process per instance (ADK's import costs about 3 s of CPU: three
separate imports made lesson 7 wait 20 s on a loaded machine). Each instance reads one JSON
request a line from its IN_FD and answers one JSON line on its OUT_FD; it ends when that pipe
closes, so it never outlives the kernel that started it. Lesson 7 starts three of them.

Each instance owns a SQLite file of its own through ADK 2.10's ``SqliteSessionService``
(``sqlite``), a second one through the course's service (``course``, for lesson 7's measures)
and, per database URL a request names, ADK 2.10's ``DatabaseSessionService`` (``shared``); a
request names its store, so that all are measured in one run.

Request: ``{"store": "sqlite"|"course"|"shared", "user_id": …, "session_id": … or null (create
the session), "text": …, "url": … (with "shared")}``; without ``text``, a probe: the store is
opened (ADK creates its tables) and nothing else. Answer: ``{"instance", "pid", "session_id",
"replies", "seconds", "error"}``; ``error`` is what the tutor would show (an unknown session or
store), while ``failure`` (with ``missing``, the module an import lacked) says the instance
could not serve the turn at all. The first line an instance writes is ``{"ready": …}``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import time
from typing import Any, TextIO

from ..app import APP_NAME
from .agent import Tuteur
from .runner import Runner, UnknownSessionError, message

__all__ = ["main", "serve"]

# SQLAlchemy's asyncio extension raises ImportError once (greenlet missing, under SQLAlchemy
# 2.1), which ADK's module swallows before failing on a NameError; a second import succeeds.
# Imported first, before ADK, its error is kept here and shown for the shared store.
_ASYNC_IMPORT_ERROR: ImportError | None = None


def _import_async_engine() -> None:
    global _ASYNC_IMPORT_ERROR
    try:
        import sqlalchemy.ext.asyncio  # noqa: F401
    except ImportError as err:
        _ASYNC_IMPORT_ERROR = err


def _reply_texts(event: Any) -> list[str]:
    if event.author == "user" or not event.content:
        return []
    return [p.text for p in event.content.parts or [] if getattr(p, "text", None)]


async def _turn(services: dict[str, Any], request: dict[str, Any]) -> dict[str, Any]:
    store = request.get("store", "")
    if store == "shared" and isinstance(request.get("url"), str):
        if _ASYNC_IMPORT_ERROR is not None:  # the real cause, not ADK's NameError
            raise _ASYNC_IMPORT_ERROR
        from google.adk.sessions.database_session_service import DatabaseSessionService

        url = request["url"]
        if url not in services:  # one service (one connection pool) per database
            services[url] = DatabaseSessionService(url)
        store = url
    service = services.get(store) if store != "shared" else None
    if service is None:
        return {"error": f"stockage inconnu\u00a0: {request.get('store')!r}"}
    user_id, session_id = str(request["user_id"]), request.get("session_id")
    if request.get("text") is None:  # a probe: the store answers (and makes its tables)
        await service.list_sessions(app_name=APP_NAME, user_id=user_id)
        return {"session_id": None, "replies": []}
    start = time.perf_counter()
    if session_id is None:
        session_id = (await service.create_session(app_name=APP_NAME, user_id=user_id)).id
    runner = Runner(agent=Tuteur(), app_name=APP_NAME, session_service=service)
    replies: list[str] = []
    try:
        async for event in runner.run_async(
            user_id=user_id, session_id=session_id, new_message=message(str(request["text"]))
        ):
            replies += _reply_texts(event)
    except UnknownSessionError:
        return {"session_id": session_id, "replies": [], "error": "session inconnue"}
    return {"session_id": session_id, "replies": replies, "seconds": time.perf_counter() - start}


def _failure(err: BaseException) -> dict[str, Any]:
    """What went wrong, for the balancer: the error and, if an import failed, which module."""
    answer: dict[str, Any] = {"failure": f"{type(err).__name__}\u00a0: {err}"}
    seen: BaseException | None = err
    while seen is not None:
        if isinstance(seen, ModuleNotFoundError) and seen.name:
            answer["missing"] = seen.name
            break
        seen = seen.__cause__ or seen.__context__
    return answer


async def serve(name: str, sqlite_path: str, inp: TextIO, out: TextIO) -> None:
    """Answer requests from ``inp`` until it closes."""
    from google.adk.sessions.sqlite_session_service import SqliteSessionService

    from ..sessions import SqliteSessionService as CourseSqliteSessionService

    services: dict[str, Any] = {
        "sqlite": SqliteSessionService(sqlite_path),
        "course": CourseSqliteSessionService(sqlite_path.removesuffix(".db") + "-cours.db"),
    }
    loop = asyncio.get_running_loop()
    print(json.dumps({"ready": name, "pid": os.getpid()}), file=out, flush=True)
    try:
        while line := await loop.run_in_executor(None, inp.readline):
            try:
                answer = await _turn(services, json.loads(line))
            except Exception as err:  # noqa: BLE001 - the balancer reads the failure, goes on
                answer = _failure(err)
            answer.update(instance=name, pid=os.getpid())
            print(json.dumps(answer, ensure_ascii=False), file=out, flush=True)
    finally:
        for store, service in services.items():
            if store != "sqlite":  # ADK's SQLite service has nothing to close
                await service.close()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Les instances du tuteur (leçon 7).")
    parser.add_argument("--sqlite-dir", required=True)
    parser.add_argument("instances", nargs="+", help="NOM:FD_ENTREE:FD_SORTIE")
    args = parser.parse_args(argv)
    specs = [(name, int(i), int(o)) for name, i, o in (s.split(":") for s in args.instances)]
    # imported once, before the forks: each instance shares these pages
    _import_async_engine()
    import google.adk.sessions.database_session_service  # noqa: F401
    import google.adk.sessions.sqlite_session_service  # noqa: F401

    children = []
    for name, fd_in, fd_out in specs:
        pid = os.fork()
        if pid == 0:  # the instance
            status = 1
            try:
                for other, i, o in specs:
                    if other != name:
                        os.close(i)
                        os.close(o)
                inp = os.fdopen(fd_in, "r", encoding="utf-8")
                out = os.fdopen(fd_out, "w", encoding="utf-8")
                sqlite_path = os.path.join(args.sqlite_dir, f"instance{name}.db")
                asyncio.run(serve(name, sqlite_path, inp, out))
                status = 0
            finally:
                os._exit(status)
        children.append(pid)
    for _name, fd_in, fd_out in specs:
        os.close(fd_in)
        os.close(fd_out)
    for pid in children:  # the launcher ends with its instances
        os.waitpid(pid, 0)


if __name__ == "__main__":
    main()
