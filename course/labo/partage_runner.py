"""Runs one call of a student's ``oublier_partage`` (run as ``python -I -m``, in the sandbox).

Reads one JSON line on stdin: ``{"source", "user_id", "host", "user", "database"}``; defines the
``sql(requete, *valeurs)`` helper of lesson 7 on the only socket the sandbox holds, as the
unprivileged role it names; loads the cell and awaits ``oublier_partage(sql, user_id)``. The
student's code never writes to this process's stdout or stderr (both lead nowhere); its only
verdict is the exit status (``EXIT``), which a student could only forge to say "no error", what
a ``try``/``except`` would say too. The facts are read by the grader on the server, never here.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import os
import sys
import warnings

from .left_behind import left_behind, never_awaited, watch_threads

__all__ = ["EXIT", "REFUSED", "main"]

EXIT = {
    "ok": 0,
    "raised": 3,
    "load": 4,
    "missing": 5,
    "not_async": 6,
    "unawaited": 7,
    "sql_syntax": 8,
    "sql_table": 9,
    "sql_column": 10,
}
# PostgreSQL's refusals a learner's query meets most: their kind only, never their text (it may
# hold a hidden input); a student who forges one only changes the words of their own feedback
REFUSED = {
    "PostgresSyntaxError": "sql_syntax",
    "UndefinedTableError": "sql_table",
    "UndefinedColumnError": "sql_column",
}
FUNCTION = "oublier_partage"


def _silence() -> None:
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.close(null)


def main() -> int:
    request = json.loads(sys.stdin.readline())
    _silence()
    import asyncpg

    from course.app import APP_NAME

    async def sql(requete: str, *valeurs: object) -> list[tuple]:
        """Une requête sur la base, ses valeurs passées à part ($1, $2…)\u00a0; renvoie les
        lignes."""
        connection = await asyncpg.connect(
            host=request["host"], user=request["user"], database=request["database"]
        )
        try:
            return [tuple(row) for row in await connection.fetch(requete, *valeurs)]
        finally:
            await connection.close()

    since = watch_threads()  # a thread started from now on is the cell's (loaded or called)
    namespace: dict = {"__name__": "__main__", "APP_NAME": APP_NAME, "asyncpg": asyncpg}
    try:
        exec(compile(request["source"], "<oublier_partage>", "exec"), namespace)  # noqa: S102
    except BaseException:  # noqa: BLE001 - whatever the cell raises at load is a 0, not a crash
        return EXIT["load"]
    function = namespace.get(FUNCTION)
    if not callable(function):
        return EXIT["missing"]
    if not inspect.iscoroutinefunction(function):
        return EXIT["not_async"]

    async def call() -> bool:
        # a sql(...) without await raises nothing: its coroutine is dropped, and Python only
        # warns, when it is freed; one kept or scheduled is found as the call returns
        with warnings.catch_warnings(record=True) as warned:
            warnings.simplefilter("always", RuntimeWarning)
            await function(sql, request["user_id"])
        never = any(never_awaited(w) for w in warned)
        return await left_behind(since) or never

    try:
        unawaited = asyncio.run(call())
    except BaseException as exc:  # noqa: BLE001
        return EXIT[REFUSED.get(type(exc).__name__, "raised")]
    return EXIT["unawaited"] if unawaited else EXIT["ok"]


if __name__ == "__main__":
    os._exit(main())
