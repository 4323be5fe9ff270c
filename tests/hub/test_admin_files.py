"""What the admin docs ship for bigger classes, checked against the configuration tested live.

No Kubernetes or TLJH runs here: these tests check that the Helm values, the exchange volume,
the image recipe and the TLJH drop-in say the same thing as the one-machine hub that
test_classroom_hub.py runs for real (same paths, same groups, same wrapper, same exchange).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml
from helpers import REPO
from traitlets.config import Config

pytestmark = pytest.mark.hub

HUB = REPO / "grader" / "hub"
Z2JH = HUB / "z2jh"
PREFIX_IN_IMAGE = "/opt/cours-memoire-tuteur"


@pytest.fixture(scope="module")
def values() -> dict:
    return yaml.safe_load((Z2JH / "values.yaml").read_text(encoding="utf-8"))


def test_exchange_volume_is_shared_and_mounted_where_nbgrader_looks(values):
    pvc = yaml.safe_load((Z2JH / "exchange-pvc.yaml").read_text(encoding="utf-8"))
    assert pvc["kind"] == "PersistentVolumeClaim"
    assert pvc["spec"]["accessModes"] == ["ReadWriteMany"]  # every pod mounts it at once
    singleuser = values["singleuser"]
    volumes = {v["name"]: v for v in singleuser["storage"]["extraVolumes"]}
    mounts = {m["name"]: m for m in singleuser["storage"]["extraVolumeMounts"]}
    (name,) = [n for n, v in volumes.items() if "persistentVolumeClaim" in v]
    assert volumes[name]["persistentVolumeClaim"]["claimName"] == pvc["metadata"]["name"]
    exchange = singleuser["extraEnv"]["NBGRADER_EXCHANGE"]
    assert mounts[name]["mountPath"] == exchange
    # the exchange root is made 1777, as install-course-env.sh does on one machine
    (init,) = singleuser["initContainers"]
    assert f"chmod 1777 {exchange}" in " ".join(init["command"])
    assert init["volumeMounts"][0]["mountPath"] == exchange
    assert "chmod 1777" in (HUB / "install-course-env.sh").read_text(encoding="utf-8")


def test_groups_roster_and_wrapper_match_the_tested_hub(values):
    config = values["hub"]["config"]
    groups = config["JupyterHub"]["load_groups"]
    assert set(groups) == {"instructors", "students"}
    members = {u for g in groups.values() for u in g["users"]}
    assert members <= set(config["Authenticator"]["allowed_users"])
    assert not set(groups["students"]["users"]) & set(config["Authenticator"]["admin_users"])
    assert values["singleuser"]["cmd"] == "cours-singleuser"
    assert (HUB / "cours-singleuser").is_file()
    assert values["singleuser"]["extraEnv"]["COURSE_ID"] == "memoire-tuteur"


def test_kubernetes_hook_picks_the_tested_group_config_and_one_uid_per_user(values):
    code = values["hub"]["extraConfig"]["cours-memoire-tuteur"]
    c = Config()
    exec(compile(code, "extraConfig", "exec"), {"c": c})  # what the chart does with it
    hook, uid = c.KubeSpawner.pre_spawn_hook, c.KubeSpawner.uid
    seen = {}
    for user_id, group in ((1, "instructors"), (2, "students"), (3, None)):
        groups = [SimpleNamespace(name=group)] if group else []
        spawner = SimpleNamespace(
            user=SimpleNamespace(id=user_id, groups=groups), environment={"KEEP": "1"}
        )
        hook(spawner)
        role = spawner.environment["COURSE_ROLE"]
        assert role == (group or "students")  # no group: least privilege
        path = spawner.environment["JUPYTER_CONFIG_PATH"]
        assert path == f"{PREFIX_IN_IMAGE}/etc/{role}"
        assert (HUB / "jupyter-config" / role).is_dir()  # the folders the image installs
        assert spawner.environment["KEEP"] == "1"
        seen[user_id] = uid(spawner)
    assert len(set(seen.values())) == 3 and min(seen.values()) >= 20000


def test_image_recipe_uses_the_tested_installer():
    dockerfile = (Z2JH / "Dockerfile").read_text(encoding="utf-8")
    assert "grader/hub/install-course-env.sh" in dockerfile
    assert 'CMD ["cours-singleuser"]' in dockerfile
    for line in dockerfile.splitlines():
        if line.startswith("COPY "):
            for source in line.split()[1:-1]:
                assert (REPO / source).exists(), source
    installer = (HUB / "install-course-env.sh").read_text(encoding="utf-8")
    assert f"COURSE_HUB_PREFIX:-{PREFIX_IN_IMAGE}" in installer


def test_tljh_dropin_keeps_tljh_settings_and_adds_the_class(tmp_path: Path):
    prefix = tmp_path / "prefix"
    (prefix / "etc").mkdir(parents=True)
    shutil.copy(HUB / "jupyterhub_config.py", prefix / "etc" / "jupyterhub_config.py")
    # what TLJH's own jupyterhub_config.py has set before it loads jupyterhub_config.d/*.py
    tljh = tmp_path / "tljh_config.py"
    tljh.write_text(
        "c = get_config()\n"
        "c.JupyterHub.spawner_class = 'tljh.spawner.UserCreatingSpawner'\n"
        "c.Authenticator.allowed_users = {'deja'}\n"
        f"load_subconfig({str(HUB / 'tljh' / 'cours-memoire-tuteur.py')!r})\n"
    )
    probe = (
        "import json, sys\n"
        "from traitlets.config.loader import PyFileConfigLoader\n"
        "c = PyFileConfigLoader(sys.argv[1]).load_config()\n"
        "from jupyterhub.auth import Authenticator\n"
        "print(json.dumps({'spawner': c.JupyterHub.spawner_class, 'cmd': c.Spawner.cmd,\n"
        "  'allowed': sorted(Authenticator(config=c).allowed_users),\n"
        "  'exchange': c.Spawner.environment['NBGRADER_EXCHANGE']}))\n"
    )
    env = {**os.environ, "COURSE_HUB_PREFIX": str(prefix), "COURSE_STUDENTS": "ana,bob"}
    env.pop("COURSE_INSTRUCTORS", None)
    result = subprocess.run(
        [sys.executable, "-c", probe, str(tljh)], env=env, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    loaded = json.loads(result.stdout)
    assert loaded["spawner"] == "tljh.spawner.UserCreatingSpawner"  # TLJH's spawner kept
    assert loaded["allowed"] == ["ana", "bob", "deja", "prof"]  # added, not replaced
    assert loaded["cmd"] == [str(prefix / "env" / "bin" / "cours-singleuser")]
    assert loaded["exchange"] == "/srv/nbgrader/exchange"
