"""The graded shared-database lab's PostgreSQL: one private cluster per submission, locked down.

Started by the grader (never by student code) through ``course.postgres.ServeurPostgres`` (no
TCP, one Unix socket), in a private folder of the course's own, never the machine's temporary
folder (``clusters_root``: ``$COURS_PARTAGE_DOSSIER``, else ``~/.cache/cours-partage``, 0700; as
root, whose server runs as another user that cannot enter root's home, ``/var/lib/cours-partage``,
0711, which nobody may list); each cluster's folder is 0700 and removed at the end. Before any
student code runs:

- the base ``tuteur`` belongs to ``eleve``, an ordinary role that cannot log in (no superuser,
  no CREATEDB, no CREATEROLE): its members may read, delete and ``VACUUM FULL`` its tables, and
  nothing on the server's machine (no ``COPY … PROGRAM``, no ``pg_read_file``, no large-object
  import);
- each call logs in as a role of its own (``call_role()``: ``eleve_<random>``, a member of
  ``eleve``, created by the superuser before the call and dropped after it, what it created given
  back to ``eleve``): whatever a call sets on itself (``ALTER ROLE CURRENT_USER SET``, which
  PostgreSQL lets every role do) dies with its role, and no later call logs in as it;
- ``pg_hba.conf`` lets the members of ``eleve`` in, without password, to ``tuteur`` only, and
  ``postgres`` only with a random password that stays in this process: the student's code cannot
  become superuser;
- autovacuum is off: a dead tuple stays until the student's code removes it, so the file check
  judges the student's code, not the server's timing;
- the server's own work is in the submission's budget (``ServerLimits``), by what no role of
  the student's can change: ``temp_file_limit`` (a superuser-only setting: ``SET``, ``ALTER ROLE
  … SET`` and ``ALTER DATABASE … SET`` are refused), each call role's connection limit (only a
  role with CREATEROLE may change it), no parallel workers by default, and an address-space limit
  on every server process forked after the lock-down (``prlimit`` on the postmaster: a query that
  wants more fails with « out of memory », the server stays up). What a role may set for itself
  (``statement_timeout``, ``work_mem``… by ``SET``, ``ALTER ROLE CURRENT_USER SET`` or, as the
  base's owner, ``ALTER DATABASE tuteur SET``) decides nothing: the grader stops a call at its own
  time limit, or as soon as the server's processes together hold more memory, or its folder more
  bytes, than the budget (``usage()``), ends every connection of the student's after each call,
  drops the call's role and resets the base's settings.

The seed is real: ADK 2.10's ``DatabaseSessionService`` and the tutor write every row
(``course.labo.partage_seed``, a subprocess), once per grading process; the next bases are
restored from its ``pg_dump`` (ADK's import alone costs 3 to 7 s). ``facts()`` reads, as
``postgres``, after ending every connection of the student's: per (app, user) group of each
table, its row count and a digest; the schema's relations and triggers; and how many times each
name is readable in the base's files (read first, before any query reads a table).
"""

from __future__ import annotations

import asyncio
import json
import os
import pwd
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Coroutine, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from course.postgres import ServeurPostgres, binaires_postgres

__all__ = [
    "DATABASE",
    "FOLDER_ENV",
    "ROLE",
    "SOCKET_NAME",
    "BaseFacts",
    "GradingBase",
    "ServerLimits",
    "clusters_root",
]

DATABASE = "tuteur"
ROLE = "eleve"
SOCKET_NAME = ".s.PGSQL.5432"
TABLES = ("sessions", "events", "user_states", "app_states")
# "+eleve": eleve and its members (the call roles); a superuser is not counted as a member
HBA = f"local {DATABASE} +{ROLE} trust\nlocal all postgres scram-sha-256\n"
FOLDER_ENV = "COURS_PARTAGE_DOSSIER"  # where the grading clusters go (the instructor's choice)
ROOT_FOLDER = Path("/var/lib/cours-partage")  # as root, when the server's user cannot reach it
SEED_TIMEOUT = 180.0
_DUMPS: dict[str, str] = {}  # the seed's learners (JSON) -> the dump of the base ADK wrote

_T = TypeVar("_T")
_MiB = 1 << 20
_SOCKET_MAX = 107  # sun_path, less the final NUL


@dataclass(frozen=True)
class ServerLimits:
    """What the server may spend on one submission's calls."""

    memory_bytes: int = 1024 * _MiB  # resident memory of the server's processes together
    disk_bytes: int = 256 * _MiB  # growth of the cluster's folder over all the calls
    backend_bytes: int = 512 * _MiB  # address space one server process may add (prlimit)
    temp_file_kb: int = 64 * 1024  # temp_file_limit, per session
    connections: int = 3  # eleve's connection limit
    statement_seconds: int = 30  # default statement_timeout (the grader's own limit comes first)


def _run_to_end(coro: Coroutine[object, object, _T]) -> _T:
    """Run `coro` to its end, also from a notebook, whose kernel already runs an event loop
    (asyncio.run refuses to run there): then in a thread of its own, with its own loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coro).result()


@dataclass(frozen=True)
class BaseFacts:
    """What the base holds after a call (read by the grader as ``postgres``)."""

    groups: dict[str, dict[tuple[str, str], tuple[int, str]]]  # table -> (app, user) -> (n, md5)
    structure: tuple  # the relations of every user schema, and the triggers' count
    readable: dict[str, int]  # name -> times its bytes are in the base's files

    def count(self, table: str, app: str, user: str) -> int:
        return self.groups.get(table, {}).get((app, user), (0, ""))[0]

    def others(self, excluded: Iterable[tuple[str, str]]) -> dict:
        """Every group but `excluded`: what must not change."""
        skip = set(excluded)
        return {t: {k: v for k, v in g.items() if k not in skip} for t, g in self.groups.items()}


def _server_user() -> pwd.struct_passwd | None:
    """As root, the account the server runs as (``course.postgres``'s choice), else None."""
    from course.postgres._server import _run_as

    name = _run_as()
    return pwd.getpwnam(name) if name else None


def _reachable(folder: Path, user: pwd.struct_passwd) -> bool:
    """Whether `user` may traverse every folder down to `folder` (others' or its own bits)."""
    for parent in [folder, *folder.parents]:
        try:
            st = parent.stat()
        except OSError:
            continue  # not made yet: it will be, by us, with the right bits
        if st.st_uid == user.pw_uid:
            if not st.st_mode & 0o100:
                return False
        elif not st.st_mode & (0o010 if st.st_gid == user.pw_gid else 0o001):
            return False
    return True


def clusters_root() -> Path:
    """The folder of the grading clusters, made if need be (see ``_clusters_root``); raises
    RuntimeError, in French, when it cannot be used."""
    return _clusters_root(_server_user())


def _clusters_root(server_user: pwd.struct_passwd | None) -> Path:
    """The folder of the grading clusters: ``$COURS_PARTAGE_DOSSIER``, else
    ``$XDG_CACHE_HOME/cours-partage`` (``~/.cache/cours-partage``); as root, ``/var/lib/
    cours-partage`` when the server's user cannot traverse that one (root's home). Made 0700
    (0711 as root: the server's user must traverse it to its own cluster, and may not list it);
    an existing one must be ours and writable by no one else (never the machine's ``/tmp``)."""
    chosen = os.environ.get(FOLDER_ENV)
    if chosen:
        folder = Path(chosen).expanduser().absolute()
    else:
        cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
        folder = Path(cache).absolute() / "cours-partage"
        if server_user is not None and not _reachable(folder, server_user):
            folder = ROOT_FOLDER
    if len(str(folder / "p-12345678" / "c" / SOCKET_NAME)) > _SOCKET_MAX:  # as __enter__ makes
        raise RuntimeError(
            f"{folder} (dossier des serveurs de notation, {FOLDER_ENV}) est un chemin trop long "
            f"pour la socket d'un serveur\u00a0: choisissez un dossier au chemin plus court."
        )
    mode = 0o711 if server_user is not None else 0o700
    if not folder.exists():
        folder.mkdir(mode=0o700, parents=True)
        folder.chmod(mode)
    st = folder.lstat()
    if folder.is_symlink() or not folder.is_dir() or st.st_uid != os.geteuid():
        raise RuntimeError(
            f"{folder} (dossier des serveurs de notation, {FOLDER_ENV}) doit être un dossier "
            f"à vous\u00a0: choisissez-en un autre."
        )
    if st.st_mode & 0o022:
        raise RuntimeError(
            f"{folder} (dossier des serveurs de notation, {FOLDER_ENV}) est ouvert en écriture "
            f"à d'autres\u00a0: choisissez un dossier privé, jamais le dossier temporaire commun."
        )
    if server_user is not None and not _reachable(folder, server_user):
        raise RuntimeError(
            f"Le serveur PostgreSQL tourne sous «\u00a0{server_user.pw_name}\u00a0», qui ne peut "
            f"pas traverser {folder}\u00a0: donnez dans {FOLDER_ENV} un dossier qu'il peut "
            f"traverser."
        )
    return folder


class GradingBase:
    """``with GradingBase(learners, names) as base:`` a seeded, locked-down cluster; stopped and
    removed (with every byte the student's code wrote) at the end."""

    def __init__(
        self, learners: list[dict], names: tuple[str, ...], limits: ServerLimits | None = None
    ) -> None:
        self.learners = learners
        self.names = names
        self.limits = limits or ServerLimits()
        self.disk_start = 0
        self._password = secrets.token_hex(24)
        self._parent: Path | None = None
        self.server: ServeurPostgres | None = None
        self.login: str | None = None  # the current call's role (call_role), dropped by facts()

    # -- life ---------------------------------------------------------------------------------
    def __enter__(self) -> GradingBase:
        server_user = _server_user()
        # short names: the socket's path must fit in sun_path (107 bytes)
        self._parent = Path(tempfile.mkdtemp(prefix="p-", dir=_clusters_root(server_user)))
        try:
            if server_user is not None:  # root: the server's user alone may enter and write
                os.chown(self._parent, server_user.pw_uid, server_user.pw_gid)
            if len(str(self._parent / "c" / SOCKET_NAME)) > _SOCKET_MAX:
                raise RuntimeError(
                    f"{self._parent.parent} est un chemin trop long pour la socket du serveur de "
                    f"notation\u00a0: donnez dans {FOLDER_ENV} un dossier au chemin plus court."
                )
            self.server = ServeurPostgres(self._parent / "c", durable=False).demarrer()
            if os.geteuid() == 0:  # the sandbox's own uid must be able to connect
                self.socket.chmod(0o777)
            _run_to_end(self._lock_down())
            if self.learners:
                self._seed()
            _run_to_end(self._close_owner())
            self._limit_processes()
            # before any call: the calls together may grow the folder by disk_bytes
            self.disk_start = _folder_bytes(self.data_dir)
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self.server is not None:
            self.server.arreter()
            self.server = None
        if self._parent is not None:
            shutil.rmtree(self._parent, ignore_errors=True)
            self._parent = None

    @property
    def folder(self) -> Path | None:
        """This cluster's own folder (0700), inside ``clusters_root()``."""
        return self._parent

    @property
    def socket(self) -> Path:
        assert self.server is not None
        return self.server.dossier_socket / SOCKET_NAME

    @property
    def host(self) -> str:
        assert self.server is not None
        return str(self.server.dossier_socket)

    # -- set-up -------------------------------------------------------------------------------
    async def _lock_down(self) -> None:
        import asyncpg

        conn = await asyncpg.connect(host=self.host, user="postgres", database="postgres")
        try:
            await conn.execute(
                f"CREATE ROLE {ROLE} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION"
            )
            await conn.execute(f"CREATE DATABASE {DATABASE} OWNER {ROLE}")
            await conn.execute("ALTER SYSTEM SET autovacuum = off")
            for name, value in self._settings():
                await conn.execute(f"ALTER SYSTEM SET {name} = '{value}'")
            await self._role_settings(conn, ROLE)
            await conn.execute(f"ALTER ROLE postgres PASSWORD '{self._password}'")  # hex only
            data = Path(await conn.fetchval("SHOW data_directory"))
            (data / "pg_hba.conf").write_text(HBA)
            await conn.execute("SELECT pg_reload_conf()")
        finally:
            await conn.close()
        # the new rules hold once the server has reloaded: postgres without password is refused
        deadline = time.monotonic() + 30
        while True:
            try:
                probe = await asyncpg.connect(host=self.host, user="postgres", database="postgres")
            except Exception:  # noqa: BLE001 - refused: locked down
                return
            await probe.close()
            if time.monotonic() > deadline:
                raise RuntimeError("pg_hba.conf n'a pas été relu par le serveur de notation")
            await asyncio.sleep(0.05)

    async def _close_owner(self) -> None:
        """After the seed (ADK's pool may open several connections as eleve): eleve owns the base
        and never logs in again; the calls log in as roles of their own (``call_role``)."""
        admin = await self._connect("postgres")
        try:
            await admin.execute(f"ALTER ROLE {ROLE} NOLOGIN")
            await admin.execute(f"ALTER ROLE {ROLE} RESET ALL")
        finally:
            await admin.close()

    def call_role(self) -> str:
        """The login role of the current call, created by the superuser on first use: a member
        of eleve (its tables are its own), with the connection limit and the settings of the
        grader; ``facts()`` ends its connections and drops it, with whatever it set on itself."""
        if self.login is None:
            name = f"{ROLE}_{secrets.token_hex(6)}"
            _run_to_end(self._create_role(name))
            self.login = name
        return self.login

    async def _create_role(self, name: str) -> None:
        admin = await self._connect("postgres")
        try:
            await admin.execute(
                f"CREATE ROLE {name} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION "
                f"NOBYPASSRLS CONNECTION LIMIT {int(self.limits.connections)} IN ROLE {ROLE}"
            )
            await self._role_settings(admin, name)
        finally:
            await admin.close()

    def _settings(self) -> tuple[tuple[str, str], ...]:
        """The limits, in postgresql.auto.conf and on eleve, written by the superuser (integers
        and fixed words only)."""
        limits = self.limits
        return (
            ("temp_file_limit", f"{int(limits.temp_file_kb)}kB"),
            ("statement_timeout", f"{int(limits.statement_seconds)}s"),
            ("idle_in_transaction_session_timeout", f"{int(limits.statement_seconds)}s"),
            ("work_mem", "4MB"),
            ("maintenance_work_mem", "64MB"),
            ("max_parallel_workers_per_gather", "0"),
            ("max_parallel_maintenance_workers", "0"),
        )

    async def _role_settings(self, conn, role: str) -> None:
        """The same settings on a role, by the superuser: a role's settings come before the
        base's (which its owner may set), so the base's cannot lift them either."""
        for name, value in self._settings():
            await conn.execute(f"ALTER ROLE {role} SET {name} = '{value}'")

    @property
    def data_dir(self) -> Path:
        assert self.server is not None
        return self.server.dossier / "donnees"

    def _postmaster(self) -> int:
        return int((self.data_dir / "postmaster.pid").read_text().split("\n", 1)[0])

    def _limit_processes(self) -> None:
        """Every server process forked from now on (each connection's) may add at most
        ``backend_bytes`` to the postmaster's address space: past it, its query fails with
        « out of memory » and the server stays up (no OOM killer, no crash recovery)."""
        import resource

        if not hasattr(resource, "prlimit"):  # pragma: no cover - macOS: the student's own check
            return
        pid = self._postmaster()
        size = _status_kb(pid, "VmSize") * 1024
        limit = size + self.limits.backend_bytes
        owner = os.stat(f"/proc/{pid}").st_uid
        if owner == os.geteuid():
            resource.prlimit(pid, resource.RLIMIT_AS, (limit, limit))
            return
        # root without CAP_SYS_RESOURCE (a container) may not set another user's limits: the
        # server's own user may
        prlimit = shutil.which("prlimit") or "prlimit"
        subprocess.run(
            [prlimit, f"--pid={pid}", f"--as={limit}:{limit}"],
            check=True,
            capture_output=True,
            user=owner,
            group=os.stat(f"/proc/{pid}").st_gid,
            extra_groups=[],
        )

    def usage(self) -> tuple[int, int]:
        """(resident memory of the server's processes, their anonymous memory: the shared
        buffers are counted once, by the postmaster), bytes of the cluster's folder."""
        pid = self._postmaster()
        memory = _status_kb(pid, "VmRSS") * 1024
        for child in _children(pid):
            memory += _status_kb(child, "RssAnon") * 1024
        return memory, _folder_bytes(self.data_dir)

    def _seed(self) -> None:
        """ADK writes the seed once per process; later bases get its dump (``pg_dump``, restored
        by ``psql`` as ``eleve``, who then owns every table as after ADK's own seed)."""
        key = json.dumps(self.learners, sort_keys=True)
        if key not in _DUMPS:
            url = f"postgresql+asyncpg://{ROLE}@/{DATABASE}?host={self.host}"
            self._run([sys.executable, "-m", "course.labo.partage_seed", url, key])
            dump = [str(binaires_postgres() / "pg_dump"), "-h", self.host, "-U", "postgres"]
            dump += ["--no-owner", "--no-privileges", DATABASE]
            _DUMPS[key] = self._run(dump, env={"PGPASSWORD": self._password})
            return
        restore = [str(binaires_postgres() / "psql"), "-h", self.host, "-U", ROLE, "-d", DATABASE]
        self._run(restore + ["-q", "-v", "ON_ERROR_STOP=1", "-f", "-"], stdin=_DUMPS[key])

    def _run(self, argv: list[str], stdin: str = "", env: dict[str, str] | None = None) -> str:
        done = subprocess.run(
            argv,
            input=stdin,
            capture_output=True,
            text=True,
            timeout=SEED_TIMEOUT,
            env={**os.environ, **(env or {})},
        )
        if done.returncode != 0:
            raise RuntimeError(f"base de notation non remplie\u00a0: {done.stderr[-800:]}")
        return done.stdout

    # -- facts --------------------------------------------------------------------------------
    async def _connect(self, database: str):
        import asyncpg

        return await asyncpg.connect(
            host=self.host, user="postgres", password=self._password, database=database
        )

    async def _facts(self) -> BaseFacts:
        admin = await self._connect("postgres")
        try:
            # no connection of the student's stays (an open transaction, a sleeping query)
            if self.login is not None:
                await admin.execute(f"ALTER ROLE {self.login} NOLOGIN")
            for _ in range(200):
                alive = await admin.fetchval(
                    "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                    "WHERE backend_type = 'client backend' AND pid <> pg_backend_pid() "
                    "AND usename IS DISTINCT FROM 'postgres'"
                )
                if not alive:
                    break
                await asyncio.sleep(0.05)
            # settings the base's owner (a call role, through eleve) may have attached to it
            # reach every connection; eleve's own never apply (it does not log in)
            await admin.execute(f"ALTER DATABASE {DATABASE} RESET ALL")
            await admin.execute(f"ALTER ROLE {ROLE} RESET ALL")
            await admin.execute(f"ALTER DATABASE {DATABASE} ALLOW_CONNECTIONS true")
            # the files first, before any query here reads a table: reading a page can prune
            # its dead tuples (and move the live ones over them), which would hide what the
            # student's code left, or show a live row twice
            await admin.execute("CHECKPOINT")
            data = Path(await admin.fetchval("SHOW data_directory"))
            oid = await admin.fetchval("SELECT oid FROM pg_database WHERE datname = $1", DATABASE)
            readable = _readable(data / "base" / str(oid), self.names)
        finally:
            await admin.close()
        conn = await self._connect(DATABASE)
        try:
            await conn.execute("SET search_path = pg_catalog")
            # every relation of the user schemas with its options, and its columns' storage
            # and compression (compressed rows would hide the bytes the file check reads)
            structure = tuple(
                tuple(r)
                for r in await conn.fetch(
                    "SELECT n.nspname, c.relname, c.relkind::text, "
                    "coalesce(array_to_string(c.reloptions, ','), ''), "
                    "coalesce((SELECT string_agg(a.attname || ':' || a.attstorage::text || ':' || "
                    "a.attcompression::text, ',' ORDER BY a.attnum) FROM pg_attribute a "
                    "WHERE a.attrelid = c.oid AND a.attnum > 0), '') "
                    "FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                    "WHERE n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast') "
                    "AND n.nspname NOT LIKE 'pg!_%' ESCAPE '!' ORDER BY 1, 2"
                )
            ) + ((await conn.fetchval("SELECT count(*) FROM pg_trigger WHERE NOT tgisinternal"),),)
            groups: dict[str, dict[tuple[str, str], tuple[int, str]]] = {}
            for table in TABLES:
                kind = await conn.fetchval(
                    "SELECT relkind::text FROM pg_class WHERE oid = to_regclass($1)",
                    f"public.{table}",
                )
                if kind != "r":
                    groups[table] = {("?", "?"): (-1, "absente")}
                    continue
                user = "user_id" if table != "app_states" else "''"
                rows = await conn.fetch(
                    f"SELECT app_name, {user}, count(*), md5(string_agg(t::text, '|' ORDER BY "
                    f"t::text)) FROM public.{table} t GROUP BY 1, 2"
                )
                groups[table] = {(r[0], r[1]): (r[2], r[3]) for r in rows}
            if self.login is not None:
                await self._drop_role(conn, self.login)
                self.login = None
        finally:
            await conn.close()
        return BaseFacts(groups, structure, readable)

    async def _drop_role(self, conn, name: str) -> None:
        """The call's role goes, with every setting it gave itself; what it created in the base
        is eleve's from now on (``REASSIGN OWNED``, in the base, the only one it could enter).
        Should PostgreSQL keep it (a dependency elsewhere), it stays unable to log in, its own
        settings reset: none can reach a later call, which has a role of its own."""
        await conn.execute(f"REASSIGN OWNED BY {name} TO {ROLE}")
        await conn.execute(f"DROP OWNED BY {name}")
        try:
            await conn.execute(f"DROP ROLE {name}")
        except Exception:  # noqa: BLE001 - kept: NOLOGIN and no setting, see above
            await conn.execute(f"ALTER ROLE {name} NOLOGIN")
            await conn.execute(f"ALTER ROLE {name} RESET ALL")

    def facts(self) -> BaseFacts:
        """The base as it is now (the current call's role dropped first)."""
        return _run_to_end(self._facts())


def _status_kb(pid: int, field: str) -> int:
    """A ``kB`` field of /proc/<pid>/status (0 if the process is gone)."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith(f"{field}:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return 0


def _children(pid: int) -> list[int]:
    """The processes whose parent is `pid` (none where there is no /proc: macOS)."""
    found = []
    try:
        names = os.listdir("/proc")
    except OSError:
        return found
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                if int(f.read().rsplit(b")", 1)[1].split()[1]) == pid:
                    found.append(int(name))
        except (OSError, IndexError, ValueError):
            pass
    return found


def _folder_bytes(folder: Path) -> int:
    """Bytes on disk under `folder` (allocated blocks: a sparse file counts what it uses)."""
    total = 0
    for parent, dirs, files in os.walk(folder):
        for name in dirs + files:
            try:
                total += os.lstat(os.path.join(parent, name)).st_blocks * 512
            except OSError:
                pass
    return total


def _readable(folder: Path, names: tuple[str, ...]) -> dict[str, int]:
    """How many times each name's bytes are in the files of the base's folder."""
    found = dict.fromkeys(names, 0)
    for path in folder.iterdir():
        if not path.is_file():
            continue
        data = path.read_bytes()
        for name in names:
            found[name] += data.count(name.encode())
    return found
