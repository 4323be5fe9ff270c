"""course.cleanup: the files a lesson writes with learners' names, erased at once, and by the
watchdog when the process that asked ends, even by SIGKILL; never a running cluster."""

from __future__ import annotations

import fcntl
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

from helpers import REPO, load_factor

from course.cleanup import Effaceur, erase


def make_files(folder: Path) -> list[Path]:
    (folder / "instances").mkdir()
    (folder / "instances" / "instance1.db").write_bytes(b"Alice Martin")
    (folder / "sauvegarde.sql").write_bytes(b"Alice Martin")
    return [folder / "instances", folder / "sauvegarde.sql"]


def test_effacer_erases_now_and_a_link_never_its_target(tmp_path: Path):
    paths = make_files(tmp_path)
    target = tmp_path / "ailleurs.txt"
    target.write_text("à garder")
    link = tmp_path / "lien"
    link.symlink_to(target)
    assert all(p.exists() for p in paths)  # control
    effaceur = Effaceur(*paths, link)
    assert effaceur.effacer() == []
    assert not any(p.exists() or p.is_symlink() for p in [*paths, link])
    assert target.read_text() == "à garder"


def test_the_watchdog_erases_when_its_owner_is_killed(tmp_path: Path):
    paths = make_files(tmp_path)
    owner = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time\n"
            "from course.cleanup import Effaceur\n"
            f"Effaceur(*{[str(p) for p in paths]!r})\n"
            "print('ok', flush=True)\n"
            "time.sleep(600)\n",
        ],
        stdout=subprocess.PIPE,
        text=True,
        cwd=REPO,
    )
    try:
        assert owner.stdout.readline().strip() == "ok"
        time.sleep(0.5)
        assert all(p.exists() for p in paths), "control: nothing erased while the owner lives"
        owner.send_signal(signal.SIGKILL)
        owner.wait(30)
        deadline = time.monotonic() + 30 * load_factor()
        while any(p.exists() for p in paths) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not any(p.exists() for p in paths), "the watchdog did not erase"
    finally:
        if owner.poll() is None:
            owner.kill()
            owner.wait(10)


def test_a_locked_cluster_folder_is_erased_only_once_unlocked(tmp_path: Path):
    cluster = tmp_path / "lecon07-pg"
    (cluster / "donnees").mkdir(parents=True)
    (cluster / "donnees" / "PG_VERSION").write_text("16")
    with open(cluster / ".verrou", "a+") as lock:  # as course.postgres._watchdog holds it
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        assert erase(cluster, wait=0.3) is False
        assert (cluster / "donnees" / "PG_VERSION").exists()
    assert erase(cluster, wait=0.3) is True and not cluster.exists()


def test_the_watchdog_ignores_what_is_not_an_absolute_path(tmp_path: Path):
    kept = tmp_path / "relatif.txt"
    kept.write_text("x")
    done = subprocess.run(
        [sys.executable, "-m", "course.cleanup"],
        input="\n".join([json.dumps("relatif.txt"), "pas du json", json.dumps(["liste"])]),
        text=True,
        cwd=tmp_path,
        capture_output=True,
        timeout=60,
    )
    assert done.returncode == 0 and kept.exists()
