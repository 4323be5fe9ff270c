"""Each recipe (one machine, TLJH, Kubernetes) as ADMIN.md states it.

One JupyterHub in the hub and the servers: no Kubernetes runs here, so the pins are read from
every file that sets one (the lock, the Dockerfile's targets, the values' hub image, the install
commands of the values and the guide), and the chart's own hub image is known by the one mapping
below. TLJH's culler and the LDAP login's id rule: TLJH's configuration (reproduced) and each
recipe's configuration loaded by a real JupyterHub application. TLJH's admins: the guide's
warning. And the guide's per-recipe table: every test it names exists and runs that recipe (its
`recette` mark, read from the test sources).
"""

from __future__ import annotations

import ast
import importlib.metadata
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from chart_hub import chart_hub
from helpers import REPO
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from test_admin_files import _stages

pytestmark = pytest.mark.hub

HUB = REPO / "grader" / "hub"
Z2JH = HUB / "z2jh"
CHART_HUB_IMAGE = "quay.io/jupyterhub/k8s-hub"
NUMBERED = "2024ana@ecole.fr"  # no roster id: a leading digit and « @ »
EDGE = "ana.b-2024_x"  # a roster id with every kind of character the rule admits
# The one place that says which JupyterHub each Zero to JupyterHub chart version's own hub image
# ships, and what else that image holds (the chart's images/hub/requirements.txt at that tag;
# 4.4.0: commit 5c5f5df751588a68a7781ead01d0f62e88e2e72f, Python 3.12).
CHART_JUPYTERHUB = {"4.4.0": "5.5.0"}
CHART_HUB_PYTHON = {"4.4.0": "3.12"}
CHART_HUB_IMAGE_FREEZE = {
    "4.4.0": """
    aiohappyeyeballs==2.6.2 aiohttp==3.14.1 aiosignal==1.4.0 alembic==1.18.4
    annotated-types==0.7.0 arrow==1.4.0 attrs==26.1.0 bcrypt==5.0.0 cachetools==7.1.4
    certifi==2026.5.20 certipy==0.2.3 cffi==2.0.0 charset-normalizer==3.4.7
    cryptography==48.0.1 escapism==1.1.0 fqdn==1.5.1 frozenlist==1.8.0 google-auth==2.53.0
    google-auth-oauthlib==1.4.0 greenlet==3.5.1 idna==3.18 isoduration==20.11.0
    jinja2==3.1.6 jsonpointer==3.1.1 jsonschema==4.26.0 jsonschema-specifications==2025.9.1
    jupyter-events==0.12.1 jupyterhub==5.5.0 jupyterhub-firstuseauthenticator==1.1.1
    jupyterhub-hmacauthenticator==1.0 jupyterhub-idle-culler==1.4.0
    jupyterhub-kubespawner==7.0.0 jupyterhub-ldapauthenticator==2.0.2
    jupyterhub-ltiauthenticator==1.6.3 jupyterhub-nativeauthenticator==1.3.0
    jupyterhub-tmpauthenticator==1.0.0 kubernetes-asyncio==36.1.0 lark==1.3.1 ldap3==2.9.1
    mako==1.3.12 markupsafe==3.0.3 multidict==6.7.1 mwoauth==0.4.0 oauthenticator==17.4.0
    oauthlib==3.3.1 onetimepass==1.0.1 packaging==26.2 pamela==1.2.0
    prometheus-client==0.25.0 propcache==0.5.2 psycopg2==2.9.12 pyasn1==0.6.3
    pyasn1-modules==0.4.2 pycparser==3.0 pycurl==7.46.0 pydantic==2.13.4
    pydantic-core==2.46.4 pyjwt==2.13.0 pymysql==1.2.0 python-dateutil==2.9.0.post0
    python-json-logger==4.1.0 python-slugify==8.0.4 pyyaml==6.0.3 referencing==0.37.0
    requests==2.34.2 requests-oauthlib==2.0.0 rfc3339-validator==0.1.4
    rfc3986-validator==0.1.1 rfc3987-syntax==1.1.0 rpds-py==2026.5.1 ruamel-yaml==0.19.1
    six==1.17.0 sqlalchemy==2.0.50 sqlalchemy-cockroachdb==2.0.4 statsd==4.0.1
    text-unidecode==1.3 tornado==6.5.7 traitlets==5.15.1 typing-extensions==4.15.0
    typing-inspection==0.4.2 tzdata==2026.2 uri-template==1.3.0 urllib3==2.7.0
    webcolors==25.10.0 yarl==1.24.2
    """
}


def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def _locked(name: str) -> str:
    """The version requirements/hub.txt (the hash-checked lock) pins for `name`."""
    found = re.search(rf"^{re.escape(name)}==(\S+)", _read(REPO / "requirements" / "hub.txt"), re.M)
    assert found, name
    return found.group(1)


def _hub_stage_installs(stage: str) -> set[str]:
    """The lock's packages the Dockerfile's hub stage installs (its awk filter of hub.txt)."""
    (names,) = re.findall(r"\^\(([\w|-]+)\)==", stage)
    return set(names.split("|"))


def _built_tags(text: str, target: str) -> set[str]:
    """The image tags `docker build ... --target <target> -t <tag>` names in a text."""
    flat = re.sub(r"\\\n[#\s]*", " ", text)
    return set(re.findall(rf"--target {target}\s+-t\s+(\S+)", flat))


def chart_versions(*texts: str) -> set[str]:
    """Every chart version a `--version` of the texts names (the helm install commands)."""
    return {v for text in texts for v in re.findall(r"--version ([^\s`)\"]+)", text)}


def kubernetes_jupyterhubs(values: dict, dockerfile: str, chart: str) -> dict[str, str]:
    """The JupyterHub of the hub and of each server image on Kubernetes, from their pins."""
    stages = _stages(dockerfile)
    (spec,) = re.findall(r'^ARG JUPYTERHUB_SPEC="jupyterhub==([^"]+)"', stages["eleve"], re.M)
    found = {"eleve": spec, "enseignant": spec}  # FROM eleve: the same environment
    assert stages["enseignant"].startswith("eleve AS enseignant")
    image = values["hub"].get("image")
    if not image:  # the chart's own hub image
        found["hub"] = CHART_JUPYTERHUB[chart]
        return found
    tag = f"{image['name']}:{image['tag']}"
    built = _built_tags(dockerfile, "hub") | _built_tags(_read(HUB / "ADMIN.md"), "hub")
    assert built == {tag}, (built, tag)  # the image the values name is the hub target
    assert stages["hub"].split()[0] == f"{CHART_HUB_IMAGE}:{chart}", stages["hub"].split()[0]
    assert "jupyterhub" in _hub_stage_installs(stages["hub"])
    found["hub"] = _locked("jupyterhub")
    return found


@pytest.mark.recette("machine", "tljh", "kubernetes")
def test_one_jupyterhub_version_in_the_hub_and_the_servers():
    """Kubernetes: the chart's hub and the course's images; one machine and TLJH: by making."""
    values = yaml.safe_load(_read(Z2JH / "values.yaml"))
    dockerfile = _read(Z2JH / "Dockerfile")
    guide = _read(HUB / "ADMIN.md")
    charts = chart_versions(_read(Z2JH / "values.yaml"), guide)
    assert len(charts) == 1 and charts <= set(CHART_JUPYTERHUB), charts
    (chart,) = charts
    locked = _locked("jupyterhub")
    found = kubernetes_jupyterhubs(values, dockerfile, chart)
    assert found == {"eleve": locked, "enseignant": locked, "hub": locked}, found
    # positive control: the chart's own hub image would not match the servers
    del values["hub"]["image"]
    assert kubernetes_jupyterhubs(values, dockerfile, chart)["hub"] != locked
    # TLJH: the servers' environment takes the version of TLJH's own hub, in both languages
    tljh = 'JUPYTERHUB_SPEC="jupyterhub==$(/opt/tljh/hub/bin/jupyterhub --version)"'
    assert guide.count(tljh) >= 2
    # one machine: the hub and its servers run from the one environment the installer builds
    unit = _read(HUB / "jupyterhub-cours.service")
    assert "ExecStart=/opt/cours-memoire-tuteur/env/bin/jupyterhub " in unit
    config = _read(HUB / "jupyterhub_config.py")
    assert 'ENV_BIN = PREFIX / "env" / "bin"' in config
    assert 'c.Spawner.cmd = [str(ENV_BIN / "cours-singleuser")]' in config


def _requirements(name: str, python: str) -> list[Requirement]:
    """What the installed distribution requires in an image of that Python (no extras)."""
    environment = {"python_version": python, "sys_platform": "linux", "extra": ""}
    found = []
    for text in importlib.metadata.distribution(name).requires or []:
        requirement = Requirement(text)
        if requirement.marker is None or requirement.marker.evaluate(environment):
            found.append(requirement)
    return found


@pytest.mark.recette("kubernetes")
def test_the_charts_hub_image_holds_what_the_courses_jupyterhub_requires():
    """The hub target installs the lock's JupyterHub without its dependencies (--no-deps):
    the chart's hub image must already hold each of them, save those the stage adds."""
    (chart,) = chart_versions(_read(Z2JH / "values.yaml"))
    python = CHART_HUB_PYTHON[chart]
    image = {
        canonicalize_name(pin.split("==")[0]): pin.split("==")[1]
        for pin in CHART_HUB_IMAGE_FREEZE[chart].split()
    }
    assert image["jupyterhub"] == CHART_JUPYTERHUB[chart]
    added = {
        canonicalize_name(n)
        for n in _hub_stage_installs(_stages(_read(Z2JH / "Dockerfile"))["hub"])
    }
    # the test environment holds the lock's versions: their metadata is what the image gets
    for name in added:
        assert importlib.metadata.version(name) == _locked(name), name
    image.update({name: _locked(name) for name in added})
    unmet = [
        (name, str(requirement))
        for name in sorted(added)
        for requirement in _requirements(name, python)
        if not requirement.specifier.contains(
            image.get(canonicalize_name(requirement.name), "0.dev0"), prereleases=True
        )
        or canonicalize_name(requirement.name) not in image
    ]
    assert not unmet, unmet
    # and nothing added that the image had: the stage adds exactly what was missing
    before = dict(image)
    for name in added - {"jupyterhub"}:
        del before[name]
    del before["jupyterhub"]
    missing = {
        canonicalize_name(r.name)
        for name in added
        for r in _requirements(name, python)
        if canonicalize_name(r.name) not in before
    }
    assert missing | {"jupyterhub"} == added, (missing, added)


def _loaded_by_jupyterhub(config_file: Path, env: dict[str, str], expression: str) -> object:
    """Load a hub configuration into a real JupyterHub application, in a fresh process, as the
    hub does at start (every file, then the app's own traits); the value of `expression`
    (`app` is the application)."""
    probe = (
        "import json, sys\n"
        "from jupyterhub.app import JupyterHub\n"
        "app = JupyterHub.instance()\n"
        "app.load_config_file(sys.argv[1])\n"
        f"print(json.dumps({expression}, default=str))\n"
    )
    clean = {k: v for k, v in os.environ.items() if not k.startswith("COURSE_")}
    result = subprocess.run(
        [sys.executable, "-c", probe, str(config_file)],
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.splitlines()[-1])


def _tljh_config(tmp_path: Path, cull_timeout: int, dropin: bool = True) -> tuple[Path, dict]:
    """What TLJH's own jupyterhub_config.py sets (tljh/configurer.py: the LDAP login of
    tljh-config's auth.*, the cull-idle service of services.cull.*, TLJH's defaults for the
    rest), then its drop-ins; and the environment the course's drop-in reads."""
    prefix = tmp_path / "prefix"
    (prefix / "etc").mkdir(parents=True, exist_ok=True)
    for module in HUB.glob("*.py"):  # what the installer puts in $PREFIX/etc
        shutil.copy(module, prefix / "etc" / module.name)
    roster = tmp_path / "classe.csv"
    roster.write_text(
        "id,first_name,last_name,email,role\nprof,P,F,p@x.org,instructor\n"
        f"{EDGE},A,L,a@x.org,student\n",
        encoding="utf-8",
    )
    cull = (
        "[sys.executable, '-m', 'jupyterhub_idle_culler', "
        f"'--timeout={cull_timeout}', '--cull-every=60', '--concurrency=5', '--max-age=0']"
    )
    config = tmp_path / f"tljh_config_{cull_timeout}_{int(dropin)}.py"
    config.write_text(
        f"import sys\nsys.path.insert(0, {str(Path(__file__).parent)!r})\n"
        "from tljh_spawner import UserCreatingSpawner  # TLJH's, reproduced without systemd\n"
        "c = get_config()\n"
        "c.JupyterHub.spawner_class = UserCreatingSpawner\n"
        "c.JupyterHub.cleanup_servers = False\n"
        "c.JupyterHub.authenticator_class = 'ldapauthenticator.LDAPAuthenticator'\n"
        "c.LDAPAuthenticator.server_address = 'ldap.example.org'\n"
        "c.JupyterHub.services = []\n"
        f"c.JupyterHub.services.append({{'name': 'cull-idle', 'admin': True, 'command': {cull}}})\n"
        + (
            f"load_subconfig({str(HUB / 'tljh' / 'cours-memoire-tuteur.py')!r})\n" if dropin else ""
        ),
        encoding="utf-8",
    )
    return config, {"COURSE_HUB_PREFIX": str(prefix), "COURSE_HUB_ROSTER": str(roster)}


CULL_TIMEOUT = (
    "[a for s in app.services if s['name'] == 'cull-idle'"
    " for a in s['command'] if a.startswith('--timeout=')]"
)


@pytest.mark.recette("tljh")
def test_tljhs_culler_gets_the_courses_hour(tmp_path: Path):
    """TLJH's default 600 s becomes the guide's hour in the hub TLJH starts; an admin's own
    value stays; without the course's drop-in TLJH's default is what runs (the control)."""
    found = {}
    for timeout, dropin in ((600, True), (1800, True), (600, False)):
        config, env = _tljh_config(tmp_path, timeout, dropin)
        found[timeout, dropin] = _loaded_by_jupyterhub(
            config, env, f"[{CULL_TIMEOUT}, [s['name'] for s in app.services]]"
        )
    assert found[600, True] == [["--timeout=3600"], ["cull-idle", "roster-sync"]]
    assert found[1800, True] == [["--timeout=1800"], ["cull-idle", "roster-sync"]]
    assert found[600, False] == [["--timeout=600"], ["cull-idle"]]


@pytest.mark.recette("machine", "tljh", "kubernetes")
def test_every_recipes_ldap_login_takes_the_roster_ids(tmp_path: Path, course_env):
    """The LDAP login's username rule and TLS check, as each recipe's hub loads them: the
    roster's own rule over ldapauthenticator's default, the directory's certificate checked
    over ldap3's default (test_school_login.py runs both against a real slapd)."""
    from ldapauthenticator import LDAPAuthenticator
    from roster import ID_PATTERN

    # the roster refuses what ldapauthenticator's own default refuses
    assert not re.match(LDAPAuthenticator.valid_username_regex.default_value, NUMBERED)
    assert not ID_PATTERN.match(NUMBERED)
    assert ID_PATTERN.match(EDGE)
    assert re.match(LDAPAuthenticator.valid_username_regex.default_value, EDGE)
    rule = (
        "[app.config.LDAPAuthenticator.valid_username_regex,"
        " __import__('ldapauthenticator').LDAPAuthenticator(config=app.config).tls_kwargs]"
    )
    expected = [ID_PATTERN.pattern, {"validate": 2}]  # ssl.CERT_REQUIRED
    # one machine: the course's configuration, the school's LDAP set after it (ADMIN.md)
    plain = tmp_path / "plain_config.py"
    plain.write_text(
        f"c = get_config()\nload_subconfig({str(HUB / 'jupyterhub_config.py')!r})\n"
        "c.JupyterHub.authenticator_class = 'ldapauthenticator.LDAPAuthenticator'\n"
        "c.LDAPAuthenticator.server_address = 'ldap.example.org'\n",
        encoding="utf-8",
    )
    config, env = _tljh_config(tmp_path, 600)
    assert _loaded_by_jupyterhub(plain, env, rule) == expected
    # TLJH: tljh-config's auth.LDAPAuthenticator.* first, the drop-in after
    assert _loaded_by_jupyterhub(config, env, rule) == expected
    # Kubernetes: the chart's hub.config.LDAPAuthenticator, then the values' extraConfig
    (tmp_path / "chart").mkdir()
    members = {"prof": "instructor", EDGE: "student"}
    chart = chart_hub(tmp_path / "chart", Z2JH / "values.yaml", course_env, members, {})
    assert _loaded_by_jupyterhub(chart.config, chart.settings, rule) == expected


def _tljh_sections(guide: str) -> tuple[str, str]:
    """The French and the English TLJH sections of the guide."""
    french, english = guide.split('<a id="english"></a>')
    heading = "### The Littlest JupyterHub (TLJH)\n"
    found = []
    for half in (french, english):
        start = half.index(heading)
        found.append(half[start : half.index("\n### ", start + len(heading))])
    return found[0], found[1]


@pytest.mark.recette("tljh")
def test_the_guide_warns_that_tljh_admins_are_root():
    """TLJH gives its admins passwordless sudo: both TLJH sections of the guide say so, and the
    drop-in says it in the hub's log (test_tljh_ports.py reads that log on a real hub)."""
    french, english = _tljh_sections(_read(HUB / "ADMIN.md"))
    for text, words in (
        (french, ("tout administrateur du hub est root", "`sudo` sans mot de passe")),
        (english, ("every hub admin is root", "passwordless `sudo`")),
    ):
        for word in (*words, "`jupyterhub-admins`", "`/etc/sudoers.d/jupyterhub-admins`"):
            assert word in text, word
    dropin = _read(HUB / "tljh" / "cours-memoire-tuteur.py")
    assert "sont root sur cette machine" in dropin and "sudo sans mot de passe" in dropin


@pytest.mark.recette("kubernetes")
def test_the_charts_culler_waits_an_hour():
    """Kubernetes: the chart's own culler (the values' `cull`) at the guide's hour, and the
    course's configuration adds no second one (read from the values; no cluster here)."""
    values = yaml.safe_load(_read(Z2JH / "values.yaml"))
    assert values["cull"] == {"enabled": True, "timeout": 3600, "every": 300}
    assert values["hub"]["extraEnv"]["COURSE_HUB_CULL_TIMEOUT"] == "0"


RECIPES = ("machine", "tljh", "kubernetes")
# the headings of the per-recipe table, and the words a cell without a test must use
TABLES = {
    "### Ce que chaque recette a de testé": ("non testé", "sans objet"),
    "### What each recipe has tested": ("untested", "n/a"),
}


def _recette_args(node: ast.expr) -> list[str] | None:
    """The recipes of a `pytest.mark.recette(...)` expression, None for another one."""
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "recette"
        and ast.unparse(node.func.value) == "pytest.mark"
    ):
        return [arg.value for arg in node.args if isinstance(arg, ast.Constant)]
    return None


def recipes_of_tests() -> dict[str, set[str]]:
    """{test module file name or test function name: the recipes its `recette` marks name}
    (a function also runs the recipes of its module's `pytestmark`), read from the sources."""
    found: dict[str, set[str]] = {}
    for path in sorted((REPO / "tests").rglob("test_*.py")):
        tree = ast.parse(_read(path))
        module: set[str] = set()
        for node in tree.body:
            if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets
            ):
                marks = node.value.elts if isinstance(node.value, ast.List) else [node.value]
                for mark in marks:
                    module |= set(_recette_args(mark) or [])
        found[path.name] = module
        for node in tree.body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith(
                "test_"
            ):
                own = {r for d in node.decorator_list for r in (_recette_args(d) or [])}
                found[node.name] = module | own
    return found


def _table(guide: str, heading: str) -> list[list[str]]:
    """The rows (claim, then one cell per recipe) of the table under `heading`."""
    start = guide.index(heading + "\n")
    rows = []
    for line in guide[start:].splitlines()[1:]:
        if line.startswith("### "):
            break
        if line.startswith("|") and not set(line) <= set("|- "):
            rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
    return rows[1:]  # the header row names the recipes


def cell_problems(cell: str, recipe: str, marks: dict[str, set[str]], plain: tuple) -> list[str]:
    """What is wrong with one cell of a per-recipe table (French, for the reader)."""
    named = re.findall(r"`(test_\w+?)(\.py)?`", cell)
    if not named:
        return [] if cell.startswith(plain) else [f"ni test ni «\u00a0{plain[0]}\u00a0»"]
    problems = []
    for name, ext in named:
        if name + ext not in marks:
            problems.append(f"{name}{ext} n'existe pas")
        elif recipe not in marks[name + ext]:
            problems.append(f"{name}{ext} ne lance pas la recette {recipe}")
    return problems


@pytest.mark.recette(*RECIPES)
def test_each_claim_names_the_test_that_runs_it_on_each_recipe():
    """ADMIN.md's per-recipe tables (French and English): every cell names tests that exist
    and carry that recipe's `recette` mark, or says plainly that it is untested there."""
    guide = _read(HUB / "ADMIN.md")
    marks = recipes_of_tests()
    every_mark = {r for recipes in marks.values() for r in recipes}
    assert every_mark == set(RECIPES), every_mark  # no misspelt recipe anywhere
    # positive controls: a one-machine test named for Kubernetes, a missing test, a bare cell
    restart = "`test_a_hub_restart_keeps_the_students_server_and_kernel`"
    plain = TABLES["### What each recipe has tested"]
    assert cell_problems(restart, "machine", marks, plain) == []
    assert cell_problems(restart, "kubernetes", marks, plain)
    assert cell_problems("`test_nowhere_at_all`", "tljh", marks, plain)
    assert cell_problems("works", "tljh", marks, plain)
    tested = {}
    for heading, plain in TABLES.items():
        rows = _table(guide, heading)
        assert len(rows) >= 12, (heading, len(rows))
        problems = [
            (claim, recipe, problem)
            for claim, *cells in rows
            for recipe, cell in zip(RECIPES, cells, strict=True)
            for problem in cell_problems(cell, recipe, marks, plain)
        ]
        assert not problems, problems
        tested[heading] = [[bool(re.search(r"`test_", c)) for c in row[1:]] for row in rows]
    french, english = tested.values()
    assert french == english  # the two languages claim the same, on the same recipes
    for index, recipe in enumerate(RECIPES):  # every recipe has tested claims
        assert sum(row[index] for row in french) >= 5, recipe
