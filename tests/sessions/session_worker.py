"""A child process for the reliability tests: drives the course's SQLite service on one file.

Usage: ``python session_worker.py MODE DB [ARGS...]``; it prints one line per acknowledged
action and flushes, so the parent knows exactly what had returned before it killed the child.

Modes:
  stream DB SESSION_ID         append events forever, print each appended event's id
  many DB USER COUNT           wait for "go" on stdin, append COUNT events, print "done N"
  race DB                      per stdin line "load SID": read it, print "ready";
                               "go": append one event, print "ok" or "stale"; "quit"
  forget DB                    append one event and exit WITHOUT close(): must not hang
  readonly DB                  read the sessions, then try to write; print what happened
"""

from __future__ import annotations

import asyncio
import sys

from helpers import say

from course.sessions import ReadOnlyDatabaseError, SqliteSessionService, StaleSessionError

APP = "tuteur"


def tell(line: str) -> None:
    print(line, flush=True)


async def stream(db: str, session_id: str) -> None:
    service = SqliteSessionService(db)
    session = await service.get_session(app_name=APP, user_id="alice", session_id=session_id)
    i = 0
    while True:
        event = await service.append_event(
            session=session, event=say(f"message {i}", {"user:compteur": i})
        )
        tell(event.id)
        i += 1


async def many(db: str, user: str, count: int) -> None:
    async with SqliteSessionService(db) as service:
        session = await service.create_session(app_name=APP, user_id=user)
        tell("ready")
        await asyncio.to_thread(sys.stdin.readline)
        for i in range(count):
            await service.append_event(
                session=session, event=say(f"{user} {i}", {f"app:dernier_{user}": i})
            )
        tell(f"done {count}")


async def race(db: str) -> None:
    async with SqliteSessionService(db) as service:
        session = None
        while True:
            line = (await asyncio.to_thread(sys.stdin.readline)).split()
            if not line or line[0] == "quit":
                return
            if line[0] == "load":
                session = await service.get_session(
                    app_name=APP, user_id="alice", session_id=line[1]
                )
                tell("ready")
            elif line[0] == "go":
                try:
                    await service.append_event(session=session, event=say("course"))
                    tell("ok")
                except StaleSessionError:
                    tell("stale")


async def forget(db: str) -> None:
    service = SqliteSessionService(db)
    session = await service.create_session(app_name=APP, user_id="oubli")
    await service.append_event(session=session, event=say("sans close"))
    tell("appended")


async def readonly(db: str) -> None:
    service = SqliteSessionService(db)
    listed = await service.list_sessions(app_name=APP)
    tell(f"read {len(listed.sessions)} read_only={service.read_only}")
    try:
        await service.create_session(app_name=APP, user_id="intrus")
        tell("wrote")
    except ReadOnlyDatabaseError as exc:
        tell(f"refused {type(exc).__name__}: {exc}")
    await service.close()


def main() -> None:
    mode, db, *args = sys.argv[1:]
    if mode == "stream":
        asyncio.run(stream(db, args[0]))
    elif mode == "many":
        asyncio.run(many(db, args[0], int(args[1])))
    elif mode == "race":
        asyncio.run(race(db))
    elif mode == "forget":
        asyncio.run(forget(db))
    elif mode == "readonly":
        asyncio.run(readonly(db))
    else:
        raise SystemExit(f"mode inconnu : {mode}")


if __name__ == "__main__":
    main()
