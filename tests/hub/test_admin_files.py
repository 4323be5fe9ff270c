"""What the admin docs ship for bigger classes, checked against the configuration tested live.

No Kubernetes or TLJH runs here: these tests check that the Helm values, the exchange volume,
the image recipe and the TLJH drop-in say the same thing as the one-machine hub that
test_classroom_hub.py runs for real (same paths, same groups, same wrapper, same exchange), and
that the hub configuration turns its settings (culler, instructors' access) into what it should.
test_kubernetes_conditions.py runs the values' pods for real.
"""

from __future__ import annotations

import ast
import fnmatch
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml
from helpers import REPO
from kubernetes_asyncio import client
from kubespawner.objects import make_pod
from traitlets.config import Config, PyFileConfigLoader
from traitlets.config.loader import LazyConfigValue

pytestmark = pytest.mark.hub

HUB = REPO / "grader" / "hub"
sys.path.insert(0, str(HUB))  # roster.py, as the hub loads it
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
    # the exchange root is made 1777 and the course's folder made, as install-course-env.sh does
    # on one machine (the script runs for real in test_kubernetes_exchange.py)
    (init,) = singleuser["initContainers"]
    assert {"name": "NBGRADER_EXCHANGE", "value": exchange} in init["env"]
    assert 'chmod 01777 "$x"' in init["command"][-1]
    assert init["volumeMounts"][0]["mountPath"] == exchange
    assert "chmod 1777" in (HUB / "install-course-env.sh").read_text(encoding="utf-8")


def _sample_roster(values: dict) -> str:
    """A class, given at install time (`--set-file`): the values bake in no roster."""
    assert "stringData" not in values["hub"]["extraFiles"]["cours-classe"]
    return (
        "id,first_name,last_name,email,role\n"
        "prof,Paule,Fesseur,prof@example.org,instructor\n"
        "ana,Ana,Lima,ana@example.org,student\n"
        "bob,Bob,Martin,bob@example.org,student\n"
    )


def test_the_roster_mounted_in_the_hub_is_the_one_file_the_hub_reads(values):
    from roster import parse_roster

    files = values["hub"]["extraFiles"]
    members = parse_roster(_sample_roster(values), "values.yaml")
    roles = {m.role for m in members}
    assert {"instructor", "student"} <= roles
    etc = Path(files["cours-roster"]["mountPath"]).parent
    assert files["cours-classe"]["mountPath"] == str(etc / "classe.csv")
    # helm --set-file gives roster.py, login_guard.py and the class itself: nothing baked in
    assert not [name for name, file in files.items() if "stringData" in file]
    assert files["cours-login-guard"]["mountPath"] == str(etc / "login_guard.py")
    # a real login named, never the chart's default `dummy` (login_guard.py refuses it)
    assert values["hub"]["config"]["JupyterHub"]["authenticator_class"] == (
        "ldapauthenticator.LDAPAuthenticator"
    )
    assert values["singleuser"]["cmd"] == "cours-singleuser"
    assert (HUB / "cours-singleuser").is_file()
    assert values["singleuser"]["extraEnv"]["COURSE_ID"] == values["hub"]["extraEnv"]["COURSE_ID"]
    # one hub admin, the IT staff's, not a roster name: instructors hold the roster's scoped role
    admins = values["hub"]["extraEnv"]["COURSE_HUB_ADMINS"].split(",")
    assert admins and not {m.id for m in members} & set(admins)
    assert "Authenticator" not in values["hub"]["config"]


def test_the_chart_loads_the_one_hub_configuration(values):
    """No hub setting is written twice: the values' extraConfig only loads the course's own
    configuration file, and every course module that file imports is mounted beside it."""
    files = values["hub"]["extraFiles"]
    etc = Path(files["cours-roster"]["mountPath"]).parent
    (code,) = values["hub"]["extraConfig"].values()
    lines = [ln for ln in code.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    assert lines == [f'load_subconfig("{etc}/jupyterhub_config.py")']
    assert values["hub"]["extraEnv"]["COURSE_HUB_SPAWNER"] == "kubernetes"
    assert values["hub"]["extraEnv"]["COURSE_HUB_ROSTER"] == str(etc / "classe.csv")
    local = {path.stem for path in HUB.glob("*.py")}
    needed = {"jupyterhub_config", "roster_sync"}  # the config, and the service it starts
    for name in list(needed):
        for node in ast.walk(ast.parse((HUB / f"{name}.py").read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import | ast.ImportFrom):
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
                needed |= {n for n in [*names, getattr(node, "module", None)] if n in local}
    # the one-machine spawners (their own mode only) are not the chart's
    needed -= {"verified_spawner", "capped_spawner", "cgroup_caps"}
    assert set(mounted_modules(values)) == {f"{name}.py" for name in needed}


def mounted_modules(values: dict) -> list[str]:
    """The hub's Python modules the values mount (`hub.extraFiles`, given by --set-file)."""
    paths = [Path(f["mountPath"]) for f in values["hub"]["extraFiles"].values()]
    return [path.name for path in paths if path.suffix == ".py"]


@pytest.fixture
def kubernetes_hook(values, tmp_path: Path, monkeypatch):
    """Run the values' extraConfig as the chart does, with the roster it mounts, on a real ORM."""
    from jupyterhub import orm

    for name in mounted_modules(values):
        shutil.copy(HUB / name, tmp_path / name)
    (tmp_path / "classe.csv").write_text(_sample_roster(values), encoding="utf-8")
    etc = str(Path(values["hub"]["extraFiles"]["cours-roster"]["mountPath"]).parent)
    for key in [k for k in os.environ if k.startswith("COURSE_HUB_")]:
        monkeypatch.delenv(key)
    for key, value in values["hub"]["extraEnv"].items():
        monkeypatch.setenv(key, value.replace(etc, str(tmp_path)))
    monkeypatch.syspath_prepend(str(tmp_path))
    c = Config()
    c.JupyterHub.load_roles = []  # what the chart sets before running extraConfig
    c.JupyterHub.services = []

    def load_subconfig(path: str) -> None:  # traitlets' own, as the chart's config file has it
        path = path.replace(etc, str(tmp_path))
        c.merge(PyFileConfigLoader(Path(path).name, str(Path(path).parent)).load_config())

    exec(
        compile(values["hub"]["extraConfig"]["cours-memoire-tuteur"], "extraConfig", "exec"),
        {"c": c, "load_subconfig": load_subconfig},
    )
    # the subconfiguration's additions, applied to the empty containers JupyterHub starts from
    for section, key, empty in (
        ("JupyterHub", "load_groups", {}),
        ("Authenticator", "allowed_users", set()),
        ("Authenticator", "admin_users", set()),
    ):
        if isinstance(c[section][key], LazyConfigValue):
            c[section][key] = c[section][key].get_value(empty)
    db = orm.new_session_factory("sqlite:///:memory:")()
    groups = {}
    for name in c.JupyterHub.load_groups:
        groups[name] = orm.Group(name=name)
        db.add(groups[name])
    users = {}
    for name in sorted(c.Authenticator.allowed_users):
        users[name] = orm.User(name=name)
        db.add(users[name])
    for name, group in c.JupyterHub.load_groups.items():
        groups[name].users = [users[u] for u in group["users"]]
    db.commit()
    yield c, db, users
    db.close()


@pytest.mark.recette("kubernetes")
def test_kubernetes_hook_gives_groups_roles_uids_and_images(kubernetes_hook, values):
    import kube_recipe
    from jupyterhub.user import User

    c, db, users = kubernetes_hook
    groups = c.JupyterHub.load_groups
    assert set(c.Authenticator.allowed_users) == {u for g in groups.values() for u in g["users"]}
    assert groups["instructors"]["users"] and groups["students"]["users"]
    (role,) = [r for r in c.JupyterHub.load_roles if r["name"] == "cours-enseignant"]
    assert role["groups"] == ["instructors"]
    assert not any(s.startswith(("admin:", "access:servers")) for s in role["scopes"]), role
    hook, uid = c.Spawner.pre_spawn_hook, c.KubeSpawner.uid
    student_image = "{name}:{tag}".format(**values["singleuser"]["image"])
    # the values' init container, then the one the chart appends: a KubeSpawner model object
    chart_block = client.V1Container(name="block-cloud-metadata", command=["iptables"])
    init = [*values["singleuser"]["initContainers"], chart_block]
    # the course's folder in the exchange: the roster's first instructor's uid, the hub's course
    prof_uid = str(uid(SimpleNamespace(user=SimpleNamespace(name="prof"))))
    made_by = [
        {"name": "COURSE_ID", "value": values["hub"]["extraEnv"]["COURSE_ID"]},
        {"name": "COURSE_EXCHANGE_OWNER_UID", "value": prof_uid},
    ]
    seen = {}
    for name, orm_user in users.items():
        spawner = SimpleNamespace(
            user=User(orm_user, db=db),
            environment={"KEEP": "1"},
            image=student_image,
            init_containers=init,
        )
        hook(spawner)
        container, block = spawner.init_containers
        assert container["env"] == [*init[0]["env"], *made_by]
        # run as the releasing instructor in every pod, never root (NFS root_squash)
        assert container["securityContext"] == {
            "runAsUser": int(prof_uid),
            "runAsGroup": values["singleuser"]["fsGid"],
            "runAsNonRoot": True,
            "allowPrivilegeEscalation": False,
        }
        assert block is chart_block and block.env is None  # not touched
        assert init[0] == values["singleuser"]["initContainers"][0]  # nor the values' dict
        # what KubeSpawner does with them: every one becomes a V1Container of the pod
        pod = make_pod(
            name="p", cmd=["c"], port=8888, image=spawner.image, init_containers=[container, block]
        )
        assert [c.name for c in pod.spec.init_containers] == [init[0]["name"], block.name]
        assert spawner.environment["COURSE_ID"] == values["hub"]["extraEnv"]["COURSE_ID"]
        role = spawner.environment["COURSE_ROLE"]
        assert role == ("instructors" if name in groups["instructors"]["users"] else "students")
        path = spawner.environment["JUPYTER_CONFIG_PATH"]
        assert path == f"{PREFIX_IN_IMAGE}/etc/{role}"
        assert (HUB / "jupyter-config" / role).is_dir()  # the folders the image installs
        assert spawner.environment["KEEP"] == "1"
        if role == "instructors":
            assert spawner.image == values["hub"]["extraEnv"]["COURSE_HUB_INSTRUCTOR_IMAGE"]
            # grading limits of their own, above a student's
            assert spawner.mem_limit == "4G" and spawner.cpu_limit == 2.0
            known = dict(e.split(":") for e in spawner.environment["COURSE_HUB_PASSWD"].split(","))
            # every class uid has a name in the instructor's pod, by the uid rule itself
            assert known == {n: str(uid(SimpleNamespace(user=u))) for n, u in users.items()}
        else:
            assert spawner.image == student_image  # no template, no hidden test in it
            assert "COURSE_HUB_PASSWD" not in spawner.environment
        seen[name] = uid(spawner)
    assert len(set(seen.values())) == len(users) and min(seen.values()) >= 100_000
    # the uid is the name's, not the hub database's row: another database gives the same
    assert seen == {name: kube_recipe.uid_of(name) for name in users}
    assert c.KubeSpawner.gid == values["singleuser"]["fsGid"] == 100
    # the chart places the hub and its proxy: the one-machine loopback address is not imposed
    assert "bind_url" not in c.JupyterHub


def test_the_hub_database_volume_outlives_helm_uninstall(values):
    """Helm keeps a resource annotated `keep` on uninstall: the hub's database volume."""
    annotations = values["hub"]["db"]["pvc"]["annotations"]
    assert annotations["helm.sh/resource-policy"] == "keep"


def test_two_names_on_one_uid_stop_the_hub(monkeypatch):
    """Two people of the class on one uid would share their files: refused, both named."""
    import kube_recipe

    kube_recipe.check_uids(["prof", "ana", "bob"])  # distinct: accepted
    monkeypatch.setattr(kube_recipe, "UID_SPAN", 1)  # every name on the same uid
    with pytest.raises(ValueError, match="«\u00a0ana\u00a0» et «\u00a0bob\u00a0»"):
        kube_recipe.check_uids(["prof", "ana", "bob"])


def _stages(dockerfile: str) -> dict[str, str]:
    parts = re.split(r"^FROM ", dockerfile, flags=re.M)[1:]
    return {part.split()[2]: part for part in parts}


def test_image_recipe_keeps_the_template_out_of_the_students_image():
    dockerfile = (Z2JH / "Dockerfile").read_text(encoding="utf-8")
    stages = _stages(dockerfile)
    assert list(stages) == ["eleve", "enseignant", "hub"]  # hub: test_recipes.py
    assert stages["enseignant"].startswith("eleve AS enseignant")
    eleve, enseignant = stages["eleve"], stages["enseignant"]
    # the students' image: the environment and the wrapper, never the sources or hidden tests
    copied = [line.split()[1:-1] for line in eleve.splitlines() if line.startswith("COPY ")]
    assert sorted(s for sources in copied for s in sources) == sorted(
        ["pyproject.toml", "README.md", "requirements", "course", "grader/hub"]
    )
    assert "COURSE_HUB_TEMPLATE=0" in eleve and "libnss-wrapper" in eleve
    assert 'CMD ["cours-singleuser"]' in eleve
    assert "grader/hub/install-course-env.sh" in eleve
    # the instructors' image adds the template and the grading sandbox
    assert "--template-only" in enseignant and "bubblewrap" in enseignant
    for line in dockerfile.splitlines():
        if line.startswith("COPY "):
            for source in line.split()[1:-1]:
                assert (REPO / source).exists(), source
    installer = (HUB / "install-course-env.sh").read_text(encoding="utf-8")
    assert f"COURSE_HUB_PREFIX:-{PREFIX_IN_IMAGE}" in installer


def _load_configs(
    config_file: Path, cases: list[tuple[dict[str, str], str]], helpers: str = ""
) -> list[object]:
    """Load a hub configuration as JupyterHub does, once per (environment, expression) case,
    each from a clean environment, all in one fresh process (one start of JupyterHub's imports
    instead of one per case); the value of each case's `expression`."""
    probe = (
        helpers + "import json, os, sys\n"
        "from traitlets.config.loader import PyFileConfigLoader\n"
        "from jupyterhub.auth import Authenticator\n"
        "def v(value):  # a list only appended to is still lazy: its value\n"
        "    return value.get_value([]) if hasattr(value, 'get_value') else value\n"
        "base, results = dict(os.environ), []\n"
        "for env, expression in json.load(sys.stdin):\n"
        "    os.environ.clear()\n"
        "    os.environ.update({**base, **env})\n"
        "    c = PyFileConfigLoader(sys.argv[1]).load_config()\n"
        "    results.append(eval(expression))\n"
        "print(json.dumps(results, default=str))\n"
    )
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("COURSE_")}
    result = subprocess.run(
        [sys.executable, "-c", probe, str(config_file)],
        input=json.dumps(cases),
        env=full_env,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def _load_config(
    config_file: Path, env: dict[str, str], expression: str, helpers: str = ""
) -> object:
    """Load a hub configuration in a fresh process, as JupyterHub does; evaluate `expression`."""
    return _load_configs(config_file, [(env, expression)], helpers)[0]


ROSTER = (
    "id,first_name,last_name,email,role\nprof,P,F,p@x.org,instructor\nana,A,L,a@x.org,student\n"
)


@pytest.mark.recette("tljh")
def test_tljh_dropin_keeps_tljh_settings_and_adds_the_class(tmp_path: Path):
    prefix = tmp_path / "prefix"
    (prefix / "etc").mkdir(parents=True)
    for module in HUB.glob("*.py"):  # what the installer puts in $PREFIX/etc
        shutil.copy(module, prefix / "etc" / module.name)
    (tmp_path / "classe.csv").write_text(ROSTER + "bob,B,M,b@x.org,student\n")
    # what TLJH's own jupyterhub_config.py has set before it loads jupyterhub_config.d/*.py
    tljh = tmp_path / "tljh_config.py"
    tljh.write_text(
        f"import sys\nsys.path.insert(0, {str(Path(__file__).parent)!r})\n"
        "from tljh_spawner import UserCreatingSpawner  # TLJH's, reproduced without systemd\n"
        "c = get_config()\n"
        "c.JupyterHub.spawner_class = UserCreatingSpawner\n"
        "c.Authenticator.allowed_users = {'deja'}\n"
        "c.UserCreatingSpawner.user_groups = {'autre': ['deja']}\n"
        "c.JupyterHub.services = [{'name': 'cull-idle', 'command': ['tljh-culler']}]\n"
        f"load_subconfig({str(HUB / 'tljh' / 'cours-memoire-tuteur.py')!r})\n"
    )
    loaded = _load_config(
        tljh,
        {"COURSE_HUB_PREFIX": str(prefix), "COURSE_HUB_ROSTER": str(tmp_path / "classe.csv")},
        "{'spawner': c.JupyterHub.spawner_class.__name__,"
        " 'unix_prefix': c.PortOwnerCheckMixin.unix_prefix, 'cmd': c.Spawner.cmd,"
        " 'allowed': sorted(Authenticator(config=c).allowed_users),"
        " 'services': [s['name'] for s in v(c.JupyterHub.services)],"
        " 'user_groups': c.UserCreatingSpawner.user_groups,"
        " 'unix_groups': _unix_groups(c),"
        " 'exchange': c.Spawner.environment['NBGRADER_EXCHANGE'],"
        " 'cleanup': c.JupyterHub.cleanup_servers,"
        " 'mem_limit': c.SystemdSpawner.mem_limit,"
        " 'unit': c.SystemdSpawner.unit_extra_properties,"
        " 'instructor': _instructor_limits(c)}",
        helpers=(
            "def _instructor_limits(c):\n"
            "    from types import SimpleNamespace as NS\n"
            "    user = NS(name='prof', id=1, groups=[NS(name='instructors')])\n"
            "    spawner = NS(user=user, port=0, environment={}, mem_limit=None,\n"
            "                 unit_extra_properties=dict(c.SystemdSpawner.unit_extra_properties))\n"
            "    c.Spawner.pre_spawn_hook(spawner)\n"
            "    return [spawner.mem_limit, spawner.unit_extra_properties]\n"
            "def _unix_groups(c):  # TLJH's user_groups per spawn, from the hub's groups now\n"
            "    from types import SimpleNamespace as NS\n"
            "    seen = {}\n"
            "    for name, groups in (('prof', []), ('ana', ['instructors']), ('deja', [])):\n"
            "        user = NS(name=name, id=1, groups=[NS(name=g) for g in groups])\n"
            "        spawner = NS(user=user, port=0, environment={}, mem_limit=None,\n"
            "                     unit_extra_properties={},\n"
            "                     user_groups=dict(c.UserCreatingSpawner.user_groups))\n"
            "        c.Spawner.pre_spawn_hook(spawner)\n"
            "        seen[name] = spawner.user_groups\n"
            "    return seen\n"
        ),
    )
    # one student cannot starve the class: SystemdSpawner's own limits, the one-machine sizes
    # (capped_spawner.py; test_student_caps.py runs them as cgroups), larger for an instructor
    assert loaded["mem_limit"] == "1G"
    assert loaded["unit"] == {"CPUWeight": "100", "TasksMax": "512"}
    assert loaded["instructor"] == ["4G", {"CPUWeight": "400", "TasksMax": "2048"}]
    assert loaded["cleanup"] is False  # a hub restart keeps every server (test_restart_safe.py)
    # TLJH's spawner kept; at start the hub checks its ports under TLJH's Unix names
    # (verified_spawner.install, run for real by test_tljh_ports.py)
    assert loaded["spawner"] == "UserCreatingSpawner"
    assert loaded["unix_prefix"] == "jupyter-"
    assert loaded["allowed"] == ["ana", "bob", "deja", "prof"]  # added, not replaced
    assert loaded["cmd"] == [str(prefix / "env" / "bin" / "cours-singleuser")]
    assert loaded["exchange"] == "/srv/nbgrader/exchange"
    # TLJH's culler, not a second one; the roster kept in step without a restart
    assert loaded["services"] == ["cull-idle", "roster-sync"]
    # TLJH adds the account to its spawner's user_groups at every start: never a list of
    # instructors read once (it would put a demoted one back in the group reading the template)
    assert loaded["user_groups"] == {"autre": ["deja"]}
    # the hook sets them per user from the hub's groups now: prof demoted, ana promoted
    # TLJH's own groups (tljh-config's users.extra_user_groups) stay as the admin set them: deja
    # spawns still in `autre`
    assert loaded["unix_groups"] == {
        "prof": {"autre": ["deja"]},
        "ana": {"autre": ["deja"], "cours-enseignants": ["ana"]},
        "deja": {"autre": ["deja"]},
    }


SERVICES = "[(s['name'], s.get('command')) for s in v(c.JupyterHub.services)]"
ROLES = "{r['name']: r['scopes'] for r in v(c.JupyterHub.load_roles)}"
TLS = {"COURSE_HUB_TLS_CERT": "/c.pem", "COURSE_HUB_TLS_KEY": "/k.pem"}
# The shipped jupyterhub_config.py under each setting the tests below read: {case: (env, expr)}
PLAIN_CASES = {
    "services": ({}, SERVICES),
    "services_short_cull": ({"COURSE_HUB_CULL_TIMEOUT": "120"}, SERVICES),
    "services_no_cull": ({"COURSE_HUB_CULL_TIMEOUT": "0"}, SERVICES),
    "bind_url": ({}, "c.JupyterHub.bind_url"),
    "bind_url_tls": (TLS, "c.JupyterHub.bind_url"),
    "roles": ({}, ROLES),
    "roles_access": ({"COURSE_HUB_INSTRUCTORS_ACCESS": "1"}, ROLES),
}


@pytest.fixture(scope="module")
def plain_hub(tmp_path_factory) -> dict[str, object]:
    """Each of PLAIN_CASES loaded (one process for all): {case: value}."""
    roster = tmp_path_factory.mktemp("plain-hub") / "classe.csv"
    roster.write_text(ROSTER)
    base = {"COURSE_HUB_ROSTER": str(roster)}
    cases = [({**base, **env}, expr) for env, expr in PLAIN_CASES.values()]
    values = _load_configs(HUB / "jupyterhub_config.py", cases)
    return dict(zip(PLAIN_CASES, values, strict=True))


@pytest.mark.recette("machine")
def test_plain_hub_culls_idle_servers_unless_told_not_to(plain_hub):
    default = dict(plain_hub["services"])
    assert default["idle-culler"][1:] == [
        "-m",
        "jupyterhub_idle_culler",
        "--timeout=3600",
        "--cull-every=300",
    ]
    short = dict(plain_hub["services_short_cull"])
    assert "--timeout=120" in short["idle-culler"]
    no_culler = plain_hub["services_no_cull"]
    assert [name for name, _ in no_culler] == ["roster-sync"]


def test_the_hub_listens_on_loopback_unless_it_serves_https(plain_hub):
    """Behind a reverse proxy (no certificate here) the hub is reachable from 127.0.0.1 only."""
    assert plain_hub["bind_url"] == "http://127.0.0.1:8000"
    assert plain_hub["bind_url_tls"] == "https://:443"


def test_instructors_open_student_servers_only_when_chosen(plain_hub):
    closed = plain_hub["roles"]["cours-enseignant"]
    opened = plain_hub["roles_access"]
    assert not [scope for scope in closed if scope.startswith("access:servers")]
    assert set(opened["cours-enseignant"]) - set(closed) == {"access:servers!user=ana"}


def test_a_missing_roster_stops_the_hub_with_a_clear_error(tmp_path: Path):
    probe = (
        "import sys\n"
        "from traitlets.config.loader import PyFileConfigLoader\n"
        "PyFileConfigLoader(sys.argv[1]).load_config()\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("COURSE_")}
    env["COURSE_HUB_ROSTER"] = str(tmp_path / "absente.csv")
    result = subprocess.run(
        [sys.executable, "-c", probe, str(HUB / "jupyterhub_config.py")],
        env=env,
        capture_output=True,
        text=True,
    )
    assert result.returncode != 0
    assert "liste de la classe introuvable" in result.stderr, result.stderr[-2000:]


def test_admin_guide_documents_every_hub_setting_in_correct_french():
    """ADMIN.md names every setting the hub reads; its French half follows the typography rules."""
    from french_text import check_markdown

    guide = (HUB / "ADMIN.md").read_text(encoding="utf-8")
    config = (HUB / "jupyterhub_config.py").read_text(encoding="utf-8")
    settings = set(re.findall(r'os\.environ\.get\("(COURSE_[A-Z_]+)"', config))
    assert {"COURSE_HUB_ROSTER", "COURSE_HUB_CULL_TIMEOUT", "COURSE_HUB_GRADER"} <= settings
    undocumented = sorted(name for name in settings if f"`{name}" not in guide)
    assert not undocumented, undocumented
    french = guide.split('<a id="english"></a>')[0]
    assert check_markdown(french, "grader/hub/ADMIN.md", lesson=False) == []


@pytest.mark.recette("kubernetes")
def test_kubernetes_values_hold_a_class_of_200(values):
    """Spawn limit above the class, guarantees from the measured rush, one course per hub."""
    assert values["hub"]["concurrentSpawnLimit"] >= 200  # the chart's 64: login 65 gets a 429
    single = values["singleuser"]
    assert single["memory"]["guarantee"] == "256M"  # about 190 MiB measured per student
    assert 0 < single["cpu"]["guarantee"] <= 0.05  # 200 students reserve 10 CPUs at most
    assert single["image"]["pullSecrets"]  # the instructors' image holds the solutions
    guide = (HUB / "ADMIN.md").read_text(encoding="utf-8")
    assert "un hub par cours" in guide.lower() and "one hub per course" in guide.lower()
    assert "spawner.extra_container_config" not in guide  # replaces the security context
    assert "spawner.container_security_context" in guide  # merges with runAsUser & co


def test_the_sandbox_preflight_is_the_sandboxs_own_check():
    """The pod check in ADMIN.md runs grading's own sandbox probe (with --proc), not bare bwrap."""
    guide = (HUB / "ADMIN.md").read_text(encoding="utf-8")
    (line,) = {
        ln.strip().lstrip("`").split("` (")[0]
        for ln in guide.splitlines()
        if "sandbox_problem" in ln and ln.strip().startswith(("python -c", "`python -c"))
    }
    assert "bwrap --unshare-all --die-with-parent --ro-bind / / true" not in guide
    command = line.replace("python -c", f"{sys.executable} -c", 1)
    result = subprocess.run(
        ["bash", "-c", command], capture_output=True, text=True, timeout=120, cwd=REPO
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "bac à sable disponible", result.stdout


def test_the_images_install_jupyterhub_from_the_hash_checked_lock():
    """The Dockerfile's JupyterHub is the lock's: the installer's hashed set already holds it."""
    dockerfile = (Z2JH / "Dockerfile").read_text(encoding="utf-8")
    (spec,) = re.findall(r'^ARG JUPYTERHUB_SPEC="([^"]+)"', dockerfile, flags=re.M)
    locked = re.search(r"^jupyterhub==(\S+)", (REPO / "requirements" / "hub.txt").read_text(), re.M)
    assert locked and spec == f"jupyterhub=={locked.group(1)}", spec


def _docker_ignores(patterns: list[str], path: str) -> bool:
    """Whether Docker leaves `path` (relative to the build context) out, for the patterns the
    file uses: a pattern matches from the context's root (`*` within one folder), `**/` any
    depth of folders before it; a folder left out takes everything under it."""
    parts = path.split("/")
    for pattern in patterns:
        for end in range(1, len(parts) + 1):
            candidate = "/".join(parts[:end])
            if pattern.startswith("**/"):
                tails = ["/".join(parts[start:end]) for start in range(end)]
                if any(fnmatch.fnmatchcase(t, pattern[3:]) for t in tails if "/" not in t):
                    return True
            elif fnmatch.fnmatchcase(candidate, pattern.rstrip("/")) and (
                candidate.count("/") == pattern.rstrip("/").count("/")
            ):
                return True
    return False


@pytest.mark.recette("kubernetes")
def test_no_class_data_goes_into_an_image():
    """The instructors' image copies grader/ whole: .dockerignore keeps every class data file
    out of the build context, and nothing the Dockerfile copies on purpose."""
    lines = (REPO / ".dockerignore").read_text(encoding="utf-8").splitlines()
    patterns = [ln.strip() for ln in lines if ln.strip() and not ln.startswith("#")]
    class_data = [
        "grader/gradebook.db",
        "grader/gradebook.db-journal",
        "grader/submitted/ana/oublier/oublier.ipynb",
        "grader/autograded/ana/oublier/oublier.ipynb",
        "grader/feedback/ana/oublier/oublier.html",
        "grader/downloaded/oublier/archive/ana.zip",
        "grader/quarantaine/oublier/x/oublier.ipynb",
        "grader/rapport/notes.csv",
        "grader/eleves.csv",
        "grader/classe.csv",
        "grader/sauvegardes/sauvegarde-2026-12-04.tar.gz",
        "grader/exports/ana.zip",
        "grader/echecs-autograde.json",
        "notebooks/lecons/lecon04.db",
        "tuteur.db",
        ".venv/bin/python",
    ]
    kept = [path for path in class_data if not _docker_ignores(patterns, path)]
    assert not kept, kept
    # what the Dockerfile copies stays in the context (positive control of the matcher)
    dockerfile = (Z2JH / "Dockerfile").read_text(encoding="utf-8")
    sources = [
        w for ln in dockerfile.splitlines() if ln.startswith("COPY ") for w in ln.split()[1:-1]
    ]
    shipped = [
        file
        for source in sources
        for file in ([source] if (REPO / source).is_file() else git_files(source))
    ]
    assert len(shipped) > 100
    dropped = [path for path in shipped if _docker_ignores(patterns, path)]
    assert not dropped, dropped


def git_files(folder: str) -> list[str]:
    """The committed files under a folder of the repository."""
    listed = subprocess.run(
        ["git", "-C", str(REPO), "ls-files", "--", folder], capture_output=True, text=True
    )
    assert listed.returncode == 0, listed.stderr
    return listed.stdout.split()


def _guide_sections(guide: str) -> dict[str, str]:
    """Each `###` or `####` section of ADMIN.md: its heading and its text."""
    parts = re.split(r"^(#{2,4} .*)$", guide, flags=re.M)
    return {parts[i]: parts[i + 1] for i in range(1, len(parts), 2) if parts[i].startswith("###")}


def test_every_admin_section_names_an_existing_test():
    """ADMIN.md states only what a test shows: each section names its test, and it exists."""
    guide = (HUB / "ADMIN.md").read_text(encoding="utf-8")
    sections = _guide_sections(guide)
    assert len(sections) > 30 and "#### Le stockage de l'échange" in sections
    untested = [
        head for head, body in sections.items() if not re.search(r"`[^`\n]*\btest_\w+", body)
    ]
    assert not untested, untested
    test_files = {path.name for path in (REPO / "tests").rglob("test_*.py")}
    sources = "\n".join(
        (REPO / "tests" / path).read_text(encoding="utf-8")
        for path in sorted(p.relative_to(REPO / "tests") for p in (REPO / "tests").rglob("*.py"))
    )
    named = set(re.findall(r"`(?:tests/[\w/]+/)?(test_\w+)(\.py)?`", guide))
    named |= {(m, "") for m in re.findall(r"`[^`]*?\b(test_\w+)\b[^`]*`", guide)}
    missing = sorted(
        name + ext
        for name, ext in named
        if (ext and f"{name}.py" not in test_files)
        or (not ext and f"{name}.py" not in test_files and f"def {name}(" not in sources)
    )
    assert not missing, missing


def test_every_shipped_file_is_in_the_guide():
    """The tables of shipped files (French and English) name every file of grader/hub/."""
    guide = (HUB / "ADMIN.md").read_text(encoding="utf-8")
    french, english = guide.split('<a id="english"></a>')
    shipped = sorted(
        path.name + ("/" if path.is_dir() else "")
        for path in HUB.iterdir()
        if path.name not in {"ADMIN.md", "__pycache__"}
    )
    for half in (french, english):
        table = half[: half.index("### Le principe" if half is french else "### How it works")]
        absent = [name for name in shipped if f"`{name.rstrip('/')}" not in table]
        assert not absent, absent
