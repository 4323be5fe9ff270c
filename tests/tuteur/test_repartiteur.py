"""course.tuteur.repartiteur and course.tuteur.instance: tutor instances as real processes.

One balancer with SQLite files only (no server here: lesson 7's run covers the shared base),
then a balancer whose owner is SIGKILLed: its instances must not outlive it.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import REPO

from course.tuteur.repartiteur import InstanceEnPanne, Repartiteur

pytestmark = pytest.mark.slow  # nbgrader, kernels or the sandbox: not in make test-fast


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is dead too
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split(") ", 1)[1][0] != "Z"
    except (FileNotFoundError, ProcessLookupError):  # gone between the open and the read
        return False


def test_round_robin_one_file_per_instance_and_bad_requests(tmp_path: Path):
    with pytest.raises(ValueError, match="entier positif"):
        Repartiteur(tmp_path, n=0)
    with Repartiteur(tmp_path, n=3) as balancer:
        assert len(set(balancer.attendre())) == 3 and os.getpid() not in balancer.pids
        first = balancer.envoyer(
            "Bonjour, je m'appelle Alice", user_id="alice", session_id=None, stockage="sqlite"
        )
        assert first["instance"] == "1" and first["replies"][0].startswith("Bonjour Alice")
        second = balancer.envoyer(
            "3", user_id="alice", session_id=first["session_id"], stockage="sqlite"
        )
        assert (second["instance"], second["error"]) == ("2", "session inconnue")
        # control: the same session, sent back to the instance that holds its file, goes on
        sticky = balancer.envoyer(
            "3", user_id="alice", session_id=first["session_id"], stockage="sqlite", instance=1
        )
        assert sticky["instance"] == "1" and "niveau 3" in sticky["replies"][0]
        with pytest.raises(ValueError, match="pas d'URL"):
            balancer.envoyer("x", user_id="a", session_id=None, stockage="shared")
        unknown = balancer.envoyer("x", user_id="a", session_id=None, stockage="nulle-part")
        assert unknown["error"].startswith("stockage inconnu")
        with pytest.raises(ValueError, match="instance doit aller de 1 à 3"):
            balancer.envoyer("x", user_id="a", session_id=None, stockage="sqlite", instance=4)
        with pytest.raises(ValueError, match="au plus un tour"):
            balancer.envoyer_ensemble([("x", "a", None, "sqlite")] * 4)
        together = balancer.envoyer_ensemble(
            [("Bonjour", f"e{i}", None, "sqlite") for i in range(3)]
        )
        assert sorted(a["instance"] for a in together) == ["1", "2", "3"]
        pids = balancer.pids
        # an instance killed under the balancer: said in French, with its pid, and true
        os.kill(pids[2], signal.SIGKILL)
        with pytest.raises(InstanceEnPanne) as gone:
            balancer.envoyer("x", user_id="a", session_id=None, stockage="sqlite", instance=3)
        said = str(gone.value)
        assert said.startswith(f"L'instance 3 du tuteur (pid {pids[2]}) s'est arrêtée\u00a0:")
        assert "(answer)" not in said and "google-adk" not in said, said
        control = balancer.envoyer("x", user_id="a", session_id=None, stockage="sqlite")
        assert control["instance"] == "1" and control["replies"]  # the others still serve
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"instance{i}.db" for i in (1, 2, 3)]
    assert not any(_alive(pid) for pid in pids), "fermer() ends the instances"
    # after fermer() (the lesson's ranger()): what is true, not « au plus un tour »
    with pytest.raises(InstanceEnPanne, match="instances du tuteur sont arrêtées"):
        balancer.envoyer("x", user_id="a", session_id=None, stockage="sqlite")


def test_instances_live_through_an_interrupt_and_end_when_their_owner_is_killed(
    tmp_path: Path,
):
    """The owner is a kernel-like process, leader of its process group, that survives SIGINT
    (a Python handler, as a busy kernel's): JupyterLab's Interrupt signals that whole group."""
    owner = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import json, signal, sys, time\n"
            "from course.tuteur.repartiteur import Repartiteur\n"
            "signal.signal(signal.SIGINT, lambda *_: print('interrompu', flush=True))\n"
            f"r = Repartiteur({str(tmp_path)!r}, n=2)\n"
            "print(json.dumps(r.attendre()), flush=True)\n"
            "while sys.stdin.readline():  # a turn for each instance, then their pids\n"
            "    try:\n"
            "        turns = r.envoyer_ensemble([('Bonjour', 'a', None, 'sqlite')] * 2)\n"
            "        print(json.dumps([t['pid'] for t in turns]), flush=True)\n"
            "    except Exception as err:\n"
            "        print(json.dumps(str(err)), flush=True)\n"
            "time.sleep(600)\n",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=REPO,
        start_new_session=True,
    )
    try:
        pids = json.loads(owner.stdout.readline())
        assert len(pids) == 2 and all(_alive(pid) for pid in pids)

        def served() -> list[int]:
            owner.stdin.write("tour\n")
            owner.stdin.flush()
            return json.loads(owner.stdout.readline())

        assert served() == pids  # control: both serve
        os.killpg(owner.pid, signal.SIGINT)
        assert owner.stdout.readline() == "interrompu\n"  # control: the group got it
        assert served() == pids, "an Interrupt of the owner's process group broke the instances"
        owner.send_signal(signal.SIGKILL)
        owner.wait(30)
        deadline = time.monotonic() + 30
        while any(_alive(pid) for pid in pids) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not any(_alive(pid) for pid in pids), "an instance outlived its kernel"
    finally:
        if owner.poll() is None:
            owner.kill()
            owner.wait(10)


def test_an_instance_that_cannot_serve_raises_its_real_cause_in_french(tmp_path: Path, monkeypatch):
    """greenlet missing (SQLAlchemy 2.1's asyncio engine cannot start; ADK then hides it behind
    a NameError): the balancer raises InstanceEnPanne naming the module, before any answer field
    is read, and the instances stay usable. Control: with greenlet, the same unreachable base
    fails for its own reason, and names no missing module."""
    url = f"postgresql+asyncpg://postgres@/tuteur?host={tmp_path / 'pas-de-serveur'}"
    with Repartiteur(tmp_path / "avec", n=2, url=url) as balancer:
        with pytest.raises(InstanceEnPanne) as control:
            balancer.ouvrir_base()
        # its folder erased under it (a second notebook's clean-up did, before): one final point
        shutil.rmtree(balancer.dossier)
        with pytest.raises(InstanceEnPanne, match="son stockage «\u00a0course\u00a0»") as erased:
            balancer.envoyer("Bonjour", user_id="a", session_id=None, stockage="course")
    assert "greenlet" not in str(control.value) and "Il manque" not in str(control.value)
    assert str(erased.value).endswith(".") and not str(erased.value).endswith(".."), erased
    assert str(control.value).startswith("L'instance 1 du tuteur n'a pas pu utiliser la base")

    site = tmp_path / "sans_greenlet"
    site.mkdir()
    (site / "sitecustomize.py").write_text("import sys\nsys.modules['greenlet'] = None\n")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(site), str(REPO)])))
    with Repartiteur(tmp_path / "sans", n=2, url=url) as balancer:
        with pytest.raises(InstanceEnPanne) as failed:
            balancer.ouvrir_base()
        said = str(failed.value)
        assert "ImportError\u00a0: The SQLAlchemy asyncio module requires" in said, said
        assert "Il manque le module Python «\u00a0greenlet\u00a0»" in said, said
        assert "pip install greenlet" in said and "NameError" not in said, said
        assert ".. " not in said and ". Il manque" in said and not said.endswith(".."), said
        # every pipe was read: the next turn goes to the next instance and is answered
        after = balancer.envoyer("Bonjour", user_id="a", session_id=None, stockage="sqlite")
        assert after["replies"] and "failure" not in after


def test_an_instance_that_ends_before_it_is_ready_says_why_in_french(tmp_path: Path, monkeypatch):
    """ADK missing from the instances' environment: the module is named, from what the instance
    itself wrote on stderr; control: an instance killed at once names no module."""
    killed = Repartiteur(tmp_path / "tuee", n=2)
    killed._launcher.kill()
    with pytest.raises(InstanceEnPanne) as gone:
        killed.attendre()
    assert str(gone.value) == (
        "L'instance 1 du tuteur s'est arrêtée avant d'être prête\u00a0: son processus a pris "
        "fin sans message."
    )
    site = tmp_path / "sans_adk"
    site.mkdir()
    (site / "sitecustomize.py").write_text("import sys\nsys.modules['google.adk'] = None\n")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(site), str(REPO)])))
    with Repartiteur(tmp_path / "sans", n=2) as balancer:
        with pytest.raises(InstanceEnPanne) as failed:
            balancer.attendre()
    said = str(failed.value)
    assert said.startswith("L'instance 1 du tuteur n'a pas pu démarrer\u00a0: il manque le "), said
    assert "module Python «\u00a0google.adk" in said and "(answer)" not in said, said
