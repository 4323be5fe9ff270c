"""Seeds the graded shared-database lab's PostgreSQL base with real tutor sessions, through
ADK 2.10's ``DatabaseSessionService`` (run as ``python -m``: ADK's import stays out of
nbgrader's process).

    python -m course.labo.partage_seed URL '[{"user_id": …, "app": …, "messages": […]}, …]'

Each learner gets one session in its app and one tutor turn per message: the rows, the ``jsonb``
and the tables are exactly those ADK writes. Runs only the instructor's data, never student code.
"""

from __future__ import annotations

import asyncio
import json
import sys

__all__ = ["seed"]


async def seed(url: str, learners: list[dict]) -> None:
    """One session per learner, one tutor turn per message, in ADK's tables at `url`."""
    from google.adk.sessions.database_session_service import DatabaseSessionService

    from course.tuteur.agent import Tuteur
    from course.tuteur.runner import Runner, message

    service = DatabaseSessionService(url)
    try:
        for learner in learners:
            app, user_id = learner["app"], learner["user_id"]
            session = await service.create_session(app_name=app, user_id=user_id)
            runner = Runner(agent=Tuteur(), app_name=app, session_service=service)
            for text in learner["messages"]:
                async for _event in runner.run_async(
                    user_id=user_id, session_id=session.id, new_message=message(text)
                ):
                    pass
    finally:
        await service.close()


if __name__ == "__main__":
    asyncio.run(seed(sys.argv[1], json.loads(sys.argv[2])))
