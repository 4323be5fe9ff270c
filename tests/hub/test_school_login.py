"""Who may log in: the hub refuses an open login, and a school's LDAP admits the roster only.

The shipped jupyterhub_config.py runs for real each time. An open login (DummyAuthenticator,
FirstUseAuthenticator, allow_all, an empty roster) stops the hub before it accepts anyone, with
a French message; the test suite's own DummyAuthenticator opt-in does not survive being copied
into a production start (another parent than pytest, a hub on every interface). Then Debian's
slapd, started here, is the school's directory: JupyterHub's LDAPAuthenticator admits a roster
name with its password, and refuses a wrong password and a directory name outside the roster.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import requests
import yaml
from chart_hub import chart_hub
from classhub import hub_settings, launch_hub, write_roster
from conftest import HUB_DIR
from helpers import free_port, stop_pids
from ldapserver import ldap_server

pytestmark = pytest.mark.hub
Z2JH = HUB_DIR / "z2jh"

ROSTER = {"prof": "instructor", "ana": "student"}


def _start_refused(
    prefix: Path, workdir: Path, lines: str, base: Path = HUB_DIR / "jupyterhub_config.py", **env
) -> str:
    """Run the `base` config plus `lines`; the hub must exit before serving: its output."""
    roster = env.pop("roster", None) or write_roster(workdir / "classe.csv", ROSTER)
    proxy_pid = workdir / "proxy.pid"
    config = workdir / "jupyterhub_test_config.py"
    config.write_text(
        f"c = get_config()  # noqa\nload_subconfig({str(base)!r})\n"
        f'c.JupyterHub.hub_bind_url = "http://127.0.0.1:{free_port()}"\n'
        f'c.ConfigurableHTTPProxy.api_url = "http://127.0.0.1:{free_port()}"\n'
        f"c.ConfigurableHTTPProxy.pid_file = {str(proxy_pid)!r}\n"
        f'c.JupyterHub.db_url = "sqlite:///{workdir / "jupyterhub.sqlite"}"\n'
        f"c.JupyterHub.cookie_secret_file = {str(workdir / 'cookie_secret')!r}\n"
        f'c.JupyterHub.bind_url = "http://127.0.0.1:{free_port()}"\n' + lines
    )
    environment = {
        "PATH": f"{prefix / 'env' / 'bin'}:/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "HOME": str(workdir),
        "COURSE_HUB_PREFIX": str(prefix),
        "COURSE_HUB_EXCHANGE": str(workdir / "exchange"),
        "COURSE_HUB_ROSTER": str(roster),
        **hub_settings(COURSE_HUB_CULL_TIMEOUT="0"),
        **env,
    }
    command = [str(prefix / "env" / "bin" / "jupyterhub"), "-f", str(config)]
    if env.pop("via_shell", None):
        command = ["sh", "-c", '"$@" & wait $!', "sh", *command]  # parent: sh, not pytest
    process = subprocess.Popen(
        command, cwd=workdir, env=environment, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    try:
        output, _ = process.communicate(timeout=60)
    finally:
        stop_pids([process.pid], grace=5)
    text = output.decode(errors="replace")
    assert process.returncode != 0, f"le hub a démarré :\n{text[-3000:]}"
    assert "Le hub de la classe refuse de démarrer" in text, text[-3000:]
    assert not proxy_pid.exists(), "le proxy a été lancé"
    return text


@pytest.mark.parametrize(
    ("case", "lines", "env", "expected"),
    [
        ("dummy", 'c.JupyterHub.authenticator_class = "dummy"\n', {}, "DummyAuthenticator"),
        (
            "first-use",  # TLJH's default: the first to type a roster name sets its password
            "from jupyterhub.auth import Authenticator\n"
            "class FirstUseAuthenticator(Authenticator):\n"
            "    async def authenticate(self, handler, data):\n"
            "        return data['username']\n"
            "c.JupyterHub.authenticator_class = FirstUseAuthenticator\n",
            {},
            "FirstUseAuthenticator",
        ),
        ("allow-all", "c.Authenticator.allow_all = True\n", {}, "allow_all est activé"),
        (
            # the test suite's opt-in copied into a unit: the hub's parent is not pytest
            "opt-in-copied",
            'c.JupyterHub.authenticator_class = "dummy"\n',
            {"COURSE_HUB_TEST_LOGIN": "dummy", "via_shell": "1"},
            "DummyAuthenticator",
        ),
        (
            # the opt-in on a hub reachable from the network
            "opt-in-open-bind",
            'c.JupyterHub.authenticator_class = "dummy"\n'
            f'c.JupyterHub.bind_url = "http://:{free_port()}"\n',
            {"COURSE_HUB_TEST_LOGIN": "dummy"},
            "DummyAuthenticator",
        ),
    ],
    ids=["dummy", "first-use", "allow-all", "opt-in-copied", "opt-in-open-bind"],
)
@pytest.mark.recette("machine")
def test_an_open_login_stops_the_hub(course_env, case, lines, env, expected, scratch):
    workdir = scratch(f"cours-hub-login-{case}-")
    text = _start_refused(course_env, workdir, lines, **env)
    assert expected in text, text[-3000:]


@pytest.mark.recette("tljh")
def test_tljhs_first_use_login_stops_the_hub(course_env, scratch):
    """TLJH's default login under the course's drop-in: the first to type a name owns it."""
    workdir = scratch("cours-hub-login-tljh-")
    tljh = workdir / "tljh_config.py"  # what TLJH sets before loading jupyterhub_config.d/
    tljh.write_text(
        "from jupyterhub.auth import Authenticator\n"
        "class FirstUseAuthenticator(Authenticator):\n"
        "    async def authenticate(self, handler, data):\n"
        "        return data['username']\n"
        "c = get_config()  # noqa\n"
        "c.JupyterHub.authenticator_class = FirstUseAuthenticator\n"
        f"load_subconfig({str(HUB_DIR / 'tljh' / 'cours-memoire-tuteur.py')!r})\n"
        'c.JupyterHub.spawner_class = "simple"  # no SystemdSpawner here; never started\n'
    )
    text = _start_refused(course_env, workdir, "", base=tljh)
    assert "FirstUseAuthenticator" in text


@pytest.mark.recette("machine")
def test_an_empty_roster_stops_the_hub(course_env, scratch):
    workdir = scratch("cours-hub-login-empty-")
    empty = write_roster(workdir / "vide.csv", {})
    text = _start_refused(course_env, workdir, "", roster=str(empty))
    assert "la liste des utilisateurs autorisés est vide" in text


def _login(url: str, name: str, password: str) -> requests.Response:
    session = requests.Session()
    session.get(f"{url}/hub/login", timeout=30)
    return session.post(
        f"{url}/hub/login",
        data={"username": name, "password": password, "_xsrf": session.cookies.get("_xsrf", "")},
        allow_redirects=False,
        timeout=60,
    )


# ldapauthenticator's default pattern refuses it, and so does the roster (its one id rule)
NUMBERED = "2024ana@ecole.fr"
EDGE = "ana.b-2024_x"  # a roster id with every kind of character the rule admits


@pytest.mark.recette("machine")
def test_the_school_directory_admits_the_roster_only(course_env, scratch):
    """A real slapd; the hub's LDAPAuthenticator binds as each person, the roster filters."""
    workdir = scratch("cours-hub-ldap-")
    people = {"prof": "mdp-prof", "ana": "mdp-ana", "intrus": "mdp-intrus", EDGE: "mdp-2024"}
    with ldap_server(workdir, people) as directory:
        overlay = (
            'c.JupyterHub.authenticator_class = "ldapauthenticator.LDAPAuthenticator"\n'
            f"c.LDAPAuthenticator.server_address = {directory.host!r}\n"
            f"c.LDAPAuthenticator.server_port = {directory.port}\n"
            'c.LDAPAuthenticator.tls_strategy = "insecure"\n'
            f"c.LDAPAuthenticator.bind_dn_template = [{directory.people_dn_template!r}]\n"
        )
        with launch_hub(
            prefix=course_env,
            workdir=workdir,
            roster=write_roster(workdir / "classe.csv", {**ROSTER, EDGE: "student"}),
            exchange=workdir / "exchange",
            settings=hub_settings(COURSE_HUB_CULL_TIMEOUT="0"),
            overlay=overlay,
            hub_config=HUB_DIR / "jupyterhub_config.py",
        ) as hub:
            assert "LDAPAuthenticator" in hub.log_path.read_text()
            admitted = _login(hub.url, "ana", "mdp-ana")
            assert admitted.status_code == 302, (admitted.status_code, hub.log_tail())
            assert "jupyterhub-hub-login" in admitted.cookies
            assert "/hub/login" not in admitted.headers["Location"]
            wrong = _login(hub.url, "ana", "mdp-prof")
            assert wrong.status_code == 403, wrong.status_code
            outsider = _login(hub.url, "intrus", "mdp-intrus")  # in the directory, not the class
            assert outsider.status_code == 403, outsider.status_code
            unknown = _login(hub.url, "zoe", "mdp-ana")  # neither
            assert unknown.status_code == 403, unknown.status_code
            # an id with every kind of character the roster's rule admits logs in
            edge = _login(hub.url, EDGE, "mdp-2024")
            assert edge.status_code == 302, (edge.status_code, hub.log_tail())
            assert "Illegal characters" not in hub.log_path.read_text()
            # the hub knows ana as logged in, and never created the outsider
            users = {u["name"] for u in hub.api("GET", "/users").json()}
            assert "intrus" not in users and "ana" in users
            assert EDGE in users


@pytest.mark.recette("machine")
async def test_the_ldap_login_takes_every_id_the_roster_takes(scratch):
    """The real LDAPAuthenticator against a real slapd, with the rule the one hub configuration
    gives every recipe (the roster's own, anchored): an id the roster admits logs in, one it
    refuses (with its line) is refused by the login too, as by ldapauthenticator's default; a
    wrong password is still refused."""
    from ldapauthenticator import LDAPAuthenticator
    from roster import ID_PATTERN, RosterError, parse_roster

    with pytest.raises(RosterError, match="ligne 2"):
        parse_roster(f"id,first_name,last_name,email,role\n{NUMBERED},A,L,a@x.org,student\n")
    assert parse_roster(f"id,first_name,last_name,email,role\n{EDGE},A,L,a@x.org,student\n")
    config = (HUB_DIR / "jupyterhub_config.py").read_text(encoding="utf-8")
    assert "c.LDAPAuthenticator.valid_username_regex = ID_PATTERN.pattern" in config
    workdir = scratch("cours-ldap-pattern-")
    people = {"ana": "mdp-ana", EDGE: "mdp-2024", NUMBERED: "mdp-2024", "a" * 33: "mdp-long"}
    with ldap_server(workdir, people) as directory:
        settings = {
            "server_address": directory.host,
            "server_port": directory.port,
            "tls_strategy": "insecure",
            "bind_dn_template": [directory.people_dn_template],
        }
        default = LDAPAuthenticator(**settings)
        course = LDAPAuthenticator(valid_username_regex=ID_PATTERN.pattern, **settings)

        async def login(authenticator, name: str, password: str) -> str | None:
            data = {"username": name, "password": password}
            found = await authenticator.authenticate(None, data)
            return found and found["name"]

        assert await login(default, NUMBERED, "mdp-2024") is None  # the default's pattern
        assert await login(default, "a" * 33, "mdp-long") == "a" * 33  # the control: no limit
        assert await login(course, EDGE, "mdp-2024") == EDGE
        assert await login(course, NUMBERED, "mdp-2024") is None
        assert await login(course, "a" * 33, "mdp-long") is None  # 32 characters at most
        assert await login(course, EDGE, "mdp-ana") is None


@pytest.mark.recette("machine")
async def test_the_school_directory_over_tls_must_show_a_trusted_certificate(scratch, tmp_path):
    """LDAPS against a real slapd whose certificate a test CA signs. The course's configuration
    (as JupyterHub loads it, the admin's CA file set after it as the guide says) binds; the
    same settings with the system's CAs only refuse that certificate; ldap3's own default
    (what the guide's settings gave before: no check) would send the password to anyone."""
    from ldap3.core.exceptions import LDAPSocketOpenError
    from ldapauthenticator import LDAPAuthenticator
    from test_recipes import _loaded_by_jupyterhub, _tljh_config

    workdir = scratch("cours-ldap-tls-")
    with ldap_server(workdir, {"ana": "mdp-ana"}, tls=True) as directory:
        _, env = _tljh_config(tmp_path, 600)  # a course prefix and a roster to load with
        plain = tmp_path / "ldap_tls_config.py"
        plain.write_text(
            f"c = get_config()\nload_subconfig({str(HUB_DIR / 'jupyterhub_config.py')!r})\n"
            "c.JupyterHub.authenticator_class = 'ldapauthenticator.LDAPAuthenticator'\n"
            f"c.LDAPAuthenticator.tls_kwargs.update({{'ca_certs_file': {directory.ca_file!r}}})\n",
            encoding="utf-8",
        )
        course_tls = _loaded_by_jupyterhub(
            plain,
            env,
            "__import__('ldapauthenticator').LDAPAuthenticator(config=app.config).tls_kwargs",
        )
        assert course_tls == {"validate": 2, "ca_certs_file": directory.ca_file}, course_tls
        settings = {
            "server_address": directory.host,
            "server_port": directory.port,
            "tls_strategy": "on_connect",
            "bind_dn_template": [directory.people_dn_template],
        }

        async def login(tls_kwargs: dict) -> str | None:
            authenticator = LDAPAuthenticator(tls_kwargs=tls_kwargs, **settings)
            found = await authenticator.authenticate(
                None, {"username": "ana", "password": "mdp-ana"}
            )
            return found and found["name"]

        assert await login(course_tls) == "ana"
        with pytest.raises(LDAPSocketOpenError):  # not a CA this machine trusts
            await login({"validate": course_tls["validate"]})
        assert await login({}) == "ana"  # ldap3's default: any certificate, the password sent


@pytest.mark.recette("kubernetes")
def test_the_charts_default_login_stops_the_kubernetes_hub(course_env, scratch):
    """z2jh: values without their authenticator fall back to the chart's `dummy`: refused."""
    workdir = scratch("cours-hub-login-z2jh-")
    values = yaml.safe_load((Z2JH / "values.yaml").read_text(encoding="utf-8"))
    assert values["hub"]["config"]["JupyterHub"].pop("authenticator_class")
    (workdir / "values.yaml").write_text(yaml.safe_dump(values), encoding="utf-8")
    chart = chart_hub(workdir, workdir / "values.yaml", course_env, ROSTER, {})
    text = _start_refused(
        course_env, workdir, "", base=chart.config, roster=str(chart.roster), **chart.settings
    )
    assert "DummyAuthenticator" in text
