"""Attack round 11: the class lock and the interruption paths, as a busy teacher meets them.

Each test states what grader/README.md promises; each failed at bf245e9 (found by a helper
session with only the docs and the commands)."""

from __future__ import annotations

import os
import signal
import subprocess
import time
import zipfile
from pathlib import Path

import psutil
import pytest
from grading.classroom.class_lock import LOCK_FILE
from grading_course import copy_course, grading, register, start_grading, submit
from helpers import command_line
from nbgrader.api import Gradebook

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

Q = "\u00a0"


def _wait(predicate, proc: subprocess.Popen | None = None, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        if proc is not None:
            assert proc.poll() is None, proc.communicate()
        time.sleep(0.01)
    raise AssertionError("jamais arrivé")


def _kill_tree(pid: int) -> None:
    try:
        parent = psutil.Process(pid)
        for child in parent.children(recursive=True):
            child.kill()
        parent.kill()
    except psutil.NoSuchProcess:
        pass


# --- 1. the lock: the process the refusal names is killed, its nbgrader grades on unlocked -------


def test_killing_the_process_the_lock_names_keeps_the_class_locked_while_its_nbgrader_grades(
    course,
):
    """README « Une seule commande à la fois » : the refusal names « make grade (processus 4242,
    …) » and says the lock « disparaît avec la commande, même arrêtée par Ctrl-C ou kill -9 ».
    The teacher kills that process (kill -9 4242, or a plain kill: SIGTERM runs no ``finally``):
    the lock was gone, but the nbgrader it started (O_CLOEXEC lock, same group, no parent-death
    signal) went on writing autograded/ and the gradebook; a second make grade was let in and
    graded the same class at the same time, and reported the first one's half-done copies as
    « déjà noté(s) ». That nbgrader now holds the lock too (stopped here while the second
    command runs: as long as a busy machine makes it start)."""
    register(course, "ana", "ben")
    submit(course, "ana", "sommeil")
    submit(course, "ben", "sommeil")
    first = start_grading(course, "autograde", "oublier")
    orphans: list[psutil.Process] = []
    try:
        wrapper = psutil.Process(first.pid)

        def nbgrader_started() -> bool:
            return any(
                "autograde" in command_line(c) and "nbgrader" in command_line(c)
                for c in wrapper.children()
            )

        _wait(nbgrader_started, first)
        orphans = [c for c in wrapper.children() if "nbgrader" in command_line(c)]
        said = (course / LOCK_FILE).read_text(encoding="utf-8")
        assert f"processus {first.pid}" in said
        os.kill(first.pid, signal.SIGKILL)  # the pid the refusal names, as a teacher kills it
        first.wait()
        for p in orphans:
            try:
                p.suspend()
            except psutil.NoSuchProcess:
                pass  # finished already: the assertion below says so
        still = [p for p in orphans if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
        assert still, "nbgrader a fini avant d'être arrêté"
        second = grading(course, "autograde", "oublier")
        out = second.stdout + second.stderr
        # what the README promises: one command at a time works on the class
        assert "Une autre commande travaille sur cette classe" in out, (
            f"nbgrader {[p.pid for p in still]} notait encore, sans verrou, pendant que la "
            f"seconde notation tournait : {out[-600:]}"
        )
    finally:
        for p in orphans:
            _kill_tree(p.pid)
        if first.poll() is None:
            os.killpg(first.pid, signal.SIGKILL)


# --- 2. an interrupted restore brings an erased learner back -------------------------------------


def _class_with_ben_erased(course: Path) -> Path:
    """ana, ben, cyr submitted; a backup; then ben erased (RGPD). The backup's path."""
    register(course, "ana", "ben", "cyr")
    for s in ("ana", "ben", "cyr"):
        submit(course, s, "complete_vacuum")
    roster = course / "eleves.csv"
    roster.write_text("id;nom\nana;Alpha\nben;Bravo\ncyr;Charlie\n", encoding="utf-8")
    save = grading(course, "backup", "sauvegarder", "--eleves", str(roster))
    assert save.returncode == 0, save.stdout + save.stderr
    erased = grading(course, "erase_learner", "--eleves", str(roster), "--confirmer", "--", "ben")
    assert erased.returncode == 0, erased.stdout + erased.stderr
    [archive] = (course / "sauvegardes").glob("sauvegarde-*.tar.gz")
    return archive


def test_an_interrupted_restore_is_finished_by_the_same_command_and_blocks_the_others(
    course, tmp_path
):
    """README « Sauvegarder et restaurer » : « Un élève effacé depuis la sauvegarde (registre des
    effacements) est effacé de nouveau de la classe restaurée ». restore() writes every file
    (gradebook last), then erases them again: a Ctrl-C or kill -9 between the two leaves ben's
    gradebook rows, submission and roster line in the class. Nothing says so afterwards: a new
    make restauration is refused (« ces données existent déjà »), and make export lists ben
    with a success status."""
    archive = _class_with_ben_erased(course)
    fresh = copy_course(tmp_path / "clone")
    roster = fresh / "eleves.csv"
    proc = start_grading(fresh, "backup", "restaurer", str(archive), "--eleves", str(roster))
    try:
        _wait(lambda: (fresh / "gradebook.db").exists(), proc)
        os.killpg(proc.pid, signal.SIGKILL)  # or Ctrl-C: SIGINT gives the same state
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
    for module, args in (("export", ()), ("backup", ("sauvegarder",))):
        blocked = grading(fresh, module, *args)
        assert blocked.returncode == 2, blocked.stdout + blocked.stderr
        assert f"la restauration de {archive} n'est pas finie" in blocked.stderr
        assert f"make restauration SAUVEGARDE={archive}" in blocked.stderr
    assert not list((fresh / "sauvegardes").glob("*.tar.gz"))
    again = grading(fresh, "backup", "restaurer", str(archive), "--eleves", str(roster))
    # finished as a whole restore ends: ben erased again, said, status 1 (as without a stop)
    assert again.returncode == 1, again.stdout + again.stderr
    assert "effacé(s) de nouveau de la classe restaurée\u00a0: «\u00a0ben\u00a0»" in again.stderr
    export = grading(fresh, "export")
    assert export.returncode == 0, export.stdout + export.stderr
    grades = (fresh / "rapport" / "grades.csv").read_text(encoding="utf-8")
    with Gradebook(f"sqlite:///{fresh / 'gradebook.db'}") as gb:
        students = sorted(s.id for s in gb.students)
    assert "ben" not in students and ",ben," not in grades and "ben" not in roster.read_text(), (
        f"ben, effacé (RGPD), est de retour après une restauration interrompue : carnet "
        f"{students}, submitted {sorted(p.name for p in (fresh / 'submitted').iterdir())}, "
        f"make export (code {export.returncode}) le liste ; la relance dit : {again.stderr}"
    )


# --- 3. two backups started in the same second ---------------------------------------------------


def test_a_backup_started_in_the_same_second_as_another_takes_the_next_name(tmp_path):
    """A crontab backup at 20:00 and the teacher's own make sauvegarde (README: « make
    sauvegarde n'attend pas ») both picked sauvegarde-<same second>.tar.gz: the second one's
    ``os.open(….partiel, O_EXCL)`` raised FileExistsError, an English traceback and no backup.
    The other's partial file (or finished backup) now sends it to the next name."""
    from grading.backup import PARTIAL, _new_archive

    stamp = "20251201-200000"
    (tmp_path / f"sauvegarde-{stamp}.tar.gz{PARTIAL}").write_bytes(b"")  # the crontab's, writing
    path, fd = _new_archive(tmp_path, stamp)
    os.close(fd)
    assert path.name == f"sauvegarde-{stamp}-1.tar.gz"
    (tmp_path / f"sauvegarde-{stamp}-1.tar.gz").write_bytes(b"")  # finished since
    path, fd = _new_archive(tmp_path, stamp)
    os.close(fd)
    assert path.name == f"sauvegarde-{stamp}-2.tar.gz"


# --- 4. a backup to a full or read-only place -----------------------------------------------------


def test_a_backup_to_a_read_only_folder_is_said_in_french(course, tmp_path):
    """README: « DOSSIER=… place les sauvegardes ailleurs (un autre disque : c'est le but) ». A
    USB key mounted read-only (immutable here, which stops root too): os.chmod raises EPERM,
    uncaught: an English traceback instead of one French sentence."""
    from read_only import freeze, thaw

    register(course, "ana")
    submit(course, "ana", "complete_vacuum")
    key = tmp_path / "cle"
    key.mkdir()
    if not freeze(key):
        pytest.skip("pas de dossier immuable ici")
    try:
        proc = grading(course, "backup", "sauvegarder", "--dossier", str(key))
    finally:
        thaw(key)
    assert "Traceback" not in proc.stderr, proc.stderr[-800:]
    assert proc.stderr.startswith("✘"), proc.stderr


def test_a_backup_to_a_full_disk_is_said_in_french(course, tmp_path):
    """The same on a full USB key (a 1 MiB tmpfs, root only): ENOSPC from gzip's close, uncaught.
    The half-written .partiel is removed (that part holds)."""
    register(course, "ana")
    submit(course, "ana", "complete_vacuum")
    big = course / "downloaded" / "oublier" / "archive" / "ent.zip"
    big.parent.mkdir(parents=True)
    big.write_bytes(os.urandom(3_000_000))
    key = tmp_path / "cle"
    key.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(key)], capture_output=True
    )
    if mounted.returncode:
        pytest.skip("pas de tmpfs ici (root seulement)")
    try:
        proc = grading(course, "backup", "sauvegarder", "--dossier", str(key))
        left = sorted(p.name for p in key.iterdir())
    finally:
        subprocess.run(["umount", str(key)], check=False)
    assert not [n for n in left if n.endswith(".partiel")], left
    assert "Traceback" not in proc.stderr, proc.stderr[-800:]
    assert proc.stderr.startswith("✘"), proc.stderr


# --- 5. zip-collect interrupted between the new copy and its time --------------------------------


def _zip_dated(path: Path, members: dict[str, tuple[str, tuple]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w") as zf:
        for name, (text, dos) in members.items():
            zf.writestr(zipfile.ZipInfo(name, date_time=dos), text)


def test_a_zip_collect_interrupted_after_the_copy_dates_it_at_the_next_run(course):
    """README « Une archive zip » : a newer copy replaces the one collected (the old folder, its
    timestamp.txt too, kept in remplaces/) and timestamp.txt receives the new copy's time. _write
    replaces the notebook, then writes timestamp.txt: interrupted between the two (Ctrl-C,
    kill -9, a full disk), the folder holds the new, late notebook with the OLD, on-time
    timestamp.txt. The next make zip-collect finds the same bytes (« inchangé ») and never dates
    it again: the late copy is graded on time, and the command says all is well."""
    import nbformat
    from grading import zip_collect
    from grading.samples import build_submission
    from tool_in_process import in_process

    register(course, "ana")
    due = grading(course, "duedate", "oublier", "2025-03-14 18:00:00 Europe/Paris")
    assert due.returncode == 0, due.stdout + due.stderr
    release = course.parent / "notebooks" / "oublier" / "oublier.ipynb"

    def nb(sample: str) -> str:
        text = (course / "submissions" / f"{sample}.py").read_text(encoding="utf-8")
        return nbformat.writes(build_submission(release, text))

    archive = course / "downloaded" / "oublier" / "archive"
    _zip_dated(
        archive / "ent-1.zip", {"ana/oublier.ipynb": (nb("ebauche"), (2025, 3, 14, 17, 0, 0))}
    )
    first = grading(course, "zip_collect", "oublier")
    assert first.returncode == 0, first.stdout + first.stderr
    stamp = course / "submitted" / "ana" / "oublier" / "timestamp.txt"
    assert stamp.read_text() == "2025-03-14 16:00:00.000000 UTC"

    # two days late, the real copy; Ctrl-C lands just after the notebook is replaced
    _zip_dated(
        archive / "ent-2.zip",
        {"ana/oublier.ipynb": (nb("complete_vacuum"), (2025, 3, 16, 9, 0, 0))},
    )
    real_stamp = zip_collect._stamp

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    zip_collect._stamp = interrupted
    try:
        stopped = in_process(zip_collect.main, course, "oublier")
    finally:
        zip_collect._stamp = real_stamp
    assert stopped.returncode == 2 and "make zip-collect interrompue (Ctrl-C)" in stopped.stderr

    again = grading(course, "zip_collect", "oublier")
    assert again.returncode == 0, again.stdout + again.stderr
    assert stamp.read_text() == "2025-03-16 08:00:00.000000 UTC", (
        f"la copie du 16/03 (en retard) garde l'heure de la copie remplacée : "
        f"{stamp.read_text()!r} ; la relance dit : {again.stdout}"
    )


# --- 6. Ctrl-C ------------------------------------------------------------------------------------


def test_ctrl_c_on_a_class_command_is_said_in_french(course):
    """README « Ce que disent les commandes » : each command « n'écrit dans le terminal que son
    bilan en français ». Ctrl-C on make grade (SIGINT to the group, as the terminal sends it):
    a KeyboardInterrupt traceback through nbgrader_run.pump, in English; no command says
    what it left done or undone."""
    register(course, "ana")
    submit(course, "ana", "sommeil")
    proc = start_grading(course, "autograde", "oublier")
    try:
        _wait(
            lambda: (
                (course / LOCK_FILE).is_file() and bool((course / LOCK_FILE).read_text().strip())
            ),
            proc,
        )
        time.sleep(3)
        os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err[-600:]
    assert "✘ make grade interrompue (Ctrl-C)\u00a0: ce qui était fini est gardé" in err, err
    assert proc.returncode == 2


# --- 7. two backups in one second: the newer one counts as the older -----------------------------


def test_the_second_backup_of_a_second_is_the_newer_one(course, tmp_path):
    """backup() names a second backup in the same second sauvegarde-<t>-1.tar.gz; backups_in
    sorts names in reverse, and « -1.tar.gz » < « .tar.gz »: the newer one ranks as the older.
    make sauvegarde GARDER=1 (the erasure's « purge immédiate ») then deletes the backup it has
    just written and keeps the other as « la plus récente ». Here the two names are made as
    backup() makes them, from one real backup (the race itself was seen: two make sauvegarde
    in one second, the second's purge calls the first « la plus récente »)."""
    from grading.privacy.backup_files import backups_in

    register(course, "ana")
    submit(course, "ana", "complete_vacuum")
    folder = tmp_path / "sauv"
    folder.mkdir()
    save = grading(course, "backup", "sauvegarder", "--dossier", str(folder))
    assert save.returncode == 0, save.stdout + save.stderr
    [(_, first)] = backups_in(folder)
    second = first.with_name(first.name.replace(".tar.gz", "-1.tar.gz"))
    second.write_bytes(first.read_bytes())  # written after it, in the same second
    [(_, newest), _] = backups_in(folder)
    assert newest == second, f"la plus récente serait {newest.name}, pas {second.name}"


# --- 8. a colleague who cannot open the lock file works without any lock -------------------------


def test_a_colleague_of_a_shared_class_is_refused_while_the_holder_works():
    """README: a second command, « un collègue dans le même dossier du hub », is refused.
    class_lock() makes the lock file 0o640 « the umask permitting », before nbgrader_config.py
    sets the course's umask: a teacher whose shell umask is 077 (or a class used before it was
    made groupshared) leaves it 0600. A colleague of the group, who may write the class's
    folders, then fails both opens (EACCES) and ``_open`` returns None: the colleague's command
    runs with NO lock at all, beside the holder's. Root runs the holder, uid 4321 of the
    class's group the colleague (setpriv)."""
    import shutil
    import sys

    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        pytest.skip("root et setpriv nécessaires pour jouer deux utilisateurs")
    import tempfile

    shared = Path(tempfile.mkdtemp(prefix="classe-partagee-"))  # /tmp: the colleague walks in
    os.chmod(shared, 0o755)
    grader = shared / "grader"
    grader.mkdir()
    os.chown(grader, 0, 1234)
    os.chmod(grader, 0o2770)  # the group's class folder (groupshared)
    code = (
        "import sys, time\n"
        "from grading.classroom.class_lock import class_lock\n"
        "with class_lock(sys.argv[1], sys.argv[2]):\n"
        "    print('dedans', flush=True); time.sleep(float(sys.argv[3]))\n"
    )
    here = Path(__file__).resolve().parents[2] / "grader"
    old = os.umask(0o077)  # the teacher's shell
    try:
        holder = subprocess.Popen(
            [sys.executable, "-c", code, str(grader), "make grade", "20"],
            cwd=here,
            stdout=subprocess.PIPE,
            text=True,
        )
    finally:
        os.umask(old)
    try:
        assert holder.stdout.readline().strip() == "dedans"
        colleague = subprocess.run(
            [
                "setpriv",
                "--reuid=4321",
                "--regid=1234",
                "--clear-groups",
                "--",
                sys.executable,
                "-c",
                code,
                str(grader),
                "make feedback",
                "0",
            ],
            cwd=here,
            capture_output=True,
            text=True,
            timeout=60,
        )
    finally:
        holder.kill()
        holder.wait()
        shutil.rmtree(shared)
    assert "Une autre commande travaille sur cette classe\u00a0: make grade" in colleague.stderr
    assert "dedans" not in colleague.stdout, (
        "le collègue est entré pendant que la notation tenait la classe "
        f"({oct((grader / LOCK_FILE).stat().st_mode & 0o777)})"
    )


# --- 9. a backup killed while writing ------------------------------------------------------------


def test_the_partial_file_of_a_killed_backup_is_purged_and_one_being_written_is_not(
    course, tmp_path
):
    """``kill -9`` during make sauvegarde (or the machine off) left sauvegarde-….tar.gz.partiel:
    never named, never purged, a learner's data kept past any retention, and listed by make
    oublier-eleve as « à vérifier à la main ». The purge (make sauvegarde's and make
    purge-sauvegardes) deletes and names such a file once nobody writes it; the partial file of a
    backup being written (locked by its writer) stays."""
    import sys

    register(course, "ana")
    submit(course, "ana", "complete_vacuum")
    folder = tmp_path / "sauv"
    folder.mkdir()
    saved = grading(course, "backup", "sauvegarder", "--dossier", str(folder))
    assert saved.returncode == 0, saved.stdout + saved.stderr
    stale, writing = (
        folder / f"sauvegarde-{day}-200000.tar.gz.partiel" for day in ("20251201", "20251202")
    )
    for path in (stale, writing):
        path.write_bytes(b"ana: 10/10")
        os.utime(path, (time.time() - 3600, time.time() - 3600))
    hold = "import fcntl, os, sys, time\nfd = os.open(sys.argv[1], os.O_RDONLY)\n"
    hold += "fcntl.flock(fd, fcntl.LOCK_EX)\nprint('ok', flush=True)\ntime.sleep(120)\n"
    writer = subprocess.Popen(
        [sys.executable, "-c", hold, str(writing)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert writer.stdout.readline().strip() == "ok"
        purged = grading(course, "backup", "purger", "--dossier", str(folder))
    finally:
        writer.kill()
        writer.communicate()
    assert purged.returncode == 0, purged.stdout + purged.stderr
    assert f"effacée{Q}: {stale.name}" in purged.stdout, purged.stdout
    assert not stale.exists() and writing.exists()
    assert len(list(folder.glob("sauvegarde-*.tar.gz"))) == 1  # the whole backup: kept


def test_a_purge_waits_for_the_purge_already_at_work_on_the_folder(course, tmp_path):
    """make purge-sauvegardes beside make sauvegarde's own purge: each read the folder, then the
    second named a backup the first had just deleted « abîmée », or stopped on FileNotFoundError
    (exit 2). One purge of a folder at a time: the second waits (an flock on the folder), then
    reads what the first left."""
    import sys

    register(course, "ana")
    submit(course, "ana", "complete_vacuum")
    folder = tmp_path / "sauv"
    folder.mkdir()
    saved = grading(course, "backup", "sauvegarder", "--dossier", str(folder))
    assert saved.returncode == 0, saved.stdout + saved.stderr
    hold = "import fcntl, os, sys, time\nfd = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECTORY)\n"
    hold += "fcntl.flock(fd, fcntl.LOCK_EX)\nprint('ok', flush=True)\nsys.stdin.readline()\n"
    first = subprocess.Popen(
        [sys.executable, "-c", hold, str(folder)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert first.stdout.readline().strip() == "ok"
        second = start_grading(course, "backup", "purger", "--dossier", str(folder))

        def at_the_folder() -> bool:  # the purge has opened the folder to lock it
            fds = Path(f"/proc/{second.pid}/fd")
            return any(os.path.realpath(f) == str(folder) for f in fds.iterdir())

        _wait(at_the_folder, second)
        time.sleep(1)  # a purge of one backup takes well under a second once it may go on
        assert second.poll() is None, second.communicate()
        first.communicate("fini\n")  # the first purge ends
        out, err = second.communicate(timeout=120)
    finally:
        if first.poll() is None:
            first.kill()
            first.communicate()
    assert second.returncode == 0, out + err
    assert "la plus récente qui contient un carnet de notes" in out
