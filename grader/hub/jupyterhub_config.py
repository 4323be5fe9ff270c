"""JupyterHub configuration for one class of the course (one machine, real Unix users).

Why each choice:
- ONE roster file (roster.py: id, first_name, last_name, email, role) decides who logs in, the
  hub groups and the staff's roles; the same file gives nbgrader its student list;
- every learner's server runs as that learner's Unix user (LocalProcessSpawner), from the shared
  course environment built by install-course-env.sh (a venv readable by everyone, not under /root);
- two hub groups decide what a server shows: `instructors` get formgrader and their own copy of
  the course, `students` get only the assignment list (nbgrader's server and lab extensions are
  switched per group through JUPYTER_CONFIG_PATH, set in a pre-spawn hook);
- instructors hold scoped roles, not hub admin: they see users and groups and start or stop the
  students' servers; they open a student's JupyterLab only if COURSE_HUB_INSTRUCTORS_ACCESS=1;
- the course template (sources, hidden tests) is readable by one Unix group only: the hook keeps
  the instructors in it, so a student cannot read the solutions or the hidden tests;
- nbgrader's exchange is one shared folder (mode 1777) named in every server's environment;
- jupyterhub-idle-culler stops servers idle for COURSE_HUB_CULL_TIMEOUT seconds (memory back);
- optionally the course's shared formgrader (nbgrader's "one class, multiple graders"): a hub
  service named after the course, run as one grading account, reached by instructors and TAs;
- Unix permissions, not hidden menus, keep learners apart: home folders are made 0700
  (by cours-singleuser, which runs as the user, so it works with any spawner).
- one hub, one course: a hub whose database holds another course's groups refuses to start
  (one_course.py);
- the hub routes a user only to a port their own Unix account holds (verified_spawner.py), with
  LocalProcessSpawner and with a kept spawner (TLJH's SystemdSpawner, on a random port), and the
  shared formgrader's fixed port only while the grading account alone listens there.

Settings come from environment variables so one file serves every class:
  COURSE_HUB_ROSTER    the class roster (CSV, see roster.py)  (default /srv/jupyterhub/classe.csv)
  COURSE_HUB_ADMINS    comma-separated hub admins (the IT staff; instructors need not be admins)
  COURSE_HUB_INSTRUCTORS_ACCESS  "1": instructors may open students' servers (default "0")
  COURSE_HUB_PREFIX    install prefix of the course env    (default /opt/cours-memoire-tuteur)
  COURSE_HUB_EXCHANGE  nbgrader exchange folder            (default /srv/nbgrader/exchange)
  COURSE_ID            nbgrader course id                  (default memoire-tuteur)
  COURSE_HUB_INSTRUCTORS_GROUP  the Unix group that reads the course template
                       (default cours-enseignants)
  COURSE_HUB_UNIX_PREFIX  Unix account = prefix + hub name (The Littlest JupyterHub: "jupyter-")
  COURSE_HUB_ROSTER_SYNC_EVERY  seconds between two looks at the roster (default 30): the
                       roster-sync service applies an edited roster without a restart
  COURSE_HUB_CULL_TIMEOUT  idle seconds before a server is stopped (default 3600; "0": no culler)
  COURSE_HUB_CULL_EVERY    seconds between two checks of the culler (default 300)
  COURSE_HUB_GRADER    Unix account running the shared formgrader (default: none, no service)
  COURSE_HUB_GRADER_PORT   its port on 127.0.0.1 (default 9999), routed only while the grading
                       account alone listens there (verified_spawner.guard_service_port)
  COURSE_HUB_TLS_CERT, COURSE_HUB_TLS_KEY  HTTPS: certificate chain and key (Let's Encrypt's
                       fullchain.pem and privkey.pem); the hub then listens on COURSE_HUB_URL
                       (default https://:443; without them http://127.0.0.1:8000, for a
                       reverse proxy on the same machine)
  COURSE_HUB_PORT_BASE  user servers listen on 127.0.0.1:<base + hub user id> (default 20000,
                       below Linux's ephemeral ports; "0": a random port, as JupyterHub does)
  COURSE_HUB_PRIVATE_HOMES  "0" leaves home folder modes alone (default: made 0700)
  COURSE_HUB_SPAWNER   "local" (default): LocalProcessSpawner; "keep": keep the spawner class
                       another config chose (The Littlest JupyterHub's SystemdSpawner);
                       "kubernetes": the chart's KubeSpawner, each server a pod of the image
                       (z2jh/values.yaml loads this file; its own pieces: kube_recipe.py)
  COURSE_HUB_EXCHANGE_OWNER  Kubernetes: the instructor who releases, owner of the course's
                       folder in the exchange (default: the roster's first instructor)
  COURSE_HUB_CAPS      "0" turns off the per-server caps (default on: each server in its own
                       cgroup, capped; the hub refuses to start where no cgroup is writable)
  COURSE_HUB_MEM_STUDENT, COURSE_HUB_MEM_INSTRUCTOR  memory cap of a student's / an instructor's
                       server and kernels (default 1G / 4G; CPU weights and task caps:
                       c.VerifiedLocalProcessSpawner.*, see capped_spawner.py)
  COURSE_HUB_CGROUP_FS  where the cgroup filesystems are mounted (default /sys/fs/cgroup)
Every recipe loads this one file: one machine (the systemd unit), TLJH (tljh/, a drop-in) and
Kubernetes (z2jh/values.yaml: the chart mounts this folder's files, its extraConfig loads this).
The authenticator is JupyterHub's default (PAM: the users' Unix passwords) unless another config
names a real one (LDAP...); the hub refuses to start with a login that lets a stranger in
(login_guard.py: DummyAuthenticator, FirstUseAuthenticator, allow_all, an empty list).
User, group, role and service lists are added to whatever another config already set. Load this
file from another config with `load_subconfig(...)` to change ports, authenticator or database.
"""

import grp
import os
import pwd
import ssl
import subprocess
import sys
from pathlib import Path

c = get_config()  # noqa: F821 (provided by traitlets when it loads this file)

# roster.py sits next to this file (in the repository and in $PREFIX/etc).
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import login_guard  # noqa: E402
import one_course  # noqa: E402
from roster import ID_PATTERN, hub_groups, hub_roles, read_roster, unix_name  # noqa: E402

PREFIX = Path(os.environ.get("COURSE_HUB_PREFIX", "/opt/cours-memoire-tuteur"))
ENV_BIN = PREFIX / "env" / "bin"
GROUP_CONFIG = PREFIX / "etc"
EXCHANGE = os.environ.get("COURSE_HUB_EXCHANGE", "/srv/nbgrader/exchange")
COURSE_ID = os.environ.get("COURSE_ID", "memoire-tuteur")
PRIVATE_HOMES = os.environ.get("COURSE_HUB_PRIVATE_HOMES", "1") != "0"
ROSTER = os.environ.get("COURSE_HUB_ROSTER", "/srv/jupyterhub/classe.csv")
UNIX_GROUP = os.environ.get("COURSE_HUB_INSTRUCTORS_GROUP", "cours-enseignants")
UNIX_PREFIX = os.environ.get("COURSE_HUB_UNIX_PREFIX", "")
CULL_TIMEOUT = int(os.environ.get("COURSE_HUB_CULL_TIMEOUT", "3600"))
CULL_EVERY = int(os.environ.get("COURSE_HUB_CULL_EVERY", "300"))
GRADER = os.environ.get("COURSE_HUB_GRADER", "")
GRADER_PORT = int(os.environ.get("COURSE_HUB_GRADER_PORT", "9999"))
TLS_CERT = os.environ.get("COURSE_HUB_TLS_CERT", "")
TLS_KEY = os.environ.get("COURSE_HUB_TLS_KEY", "")
SPAWNER = os.environ.get("COURSE_HUB_SPAWNER", "local")
if SPAWNER not in ("local", "keep", "kubernetes"):
    raise ValueError(
        f"COURSE_HUB_SPAWNER\u00a0: «\u00a0{SPAWNER}\u00a0» inconnu (local, keep ou kubernetes)"
    )
LOCAL_SPAWNER = SPAWNER == "local"
KUBERNETES = SPAWNER == "kubernetes"
PORT_BASE = int(os.environ.get("COURSE_HUB_PORT_BASE", "20000"))
CAPS = os.environ.get("COURSE_HUB_CAPS", "1") != "0"
MEM_STUDENT = os.environ.get("COURSE_HUB_MEM_STUDENT", "1G")
MEM_INSTRUCTOR = os.environ.get("COURSE_HUB_MEM_INSTRUCTOR", "4G")
CGROUP_FS = os.environ.get("COURSE_HUB_CGROUP_FS", "/sys/fs/cgroup")


def _names(variable: str) -> list[str]:
    return [name.strip() for name in os.environ.get(variable, "").split(",") if name.strip()]


MEMBERS = read_roster(ROSTER)
GROUPS = hub_groups(MEMBERS, COURSE_ID)
if GRADER:
    # nbgrader's JupyterHubAuthPlugin asks the hub for the grading account's groups: it is a hub
    # user of the course's graders group (created with the group, never allowed to log in)
    GROUPS[f"formgrade-{COURSE_ID}"]["users"].append(GRADER)

# HTTPS: passwords and tokens never cross the network in clear (PAM logins send the Unix password).
if TLS_CERT or TLS_KEY:
    if not (TLS_CERT and TLS_KEY):
        raise ValueError(
            "HTTPS\u00a0: COURSE_HUB_TLS_CERT et COURSE_HUB_TLS_KEY se donnent ensemble "
            "(certificate and key go together)"
        )
    c.JupyterHub.ssl_cert = TLS_CERT
    c.JupyterHub.ssl_key = TLS_KEY
    c.JupyterHub.bind_url = os.environ.get("COURSE_HUB_URL", "https://:443")
elif not KUBERNETES:  # the chart places the hub and its proxy (proxy.https holds the certificate)
    # behind a reverse proxy (nginx, Caddy) that holds the certificate: loopback only
    c.JupyterHub.bind_url = os.environ.get("COURSE_HUB_URL", "http://127.0.0.1:8000")

# Who may log in, in which group, with which rights (added to what another config may set).
c.Authenticator.allowed_users.update(m.id for m in MEMBERS)
# The school's LDAP login (one machine, TLJH, the chart's values) takes the roster's own id rule
# (anchored), so both admit the same ids; it refuses what ldapauthenticator's default
# (^[a-z][.a-z0-9_-]*$) refuses (a leading digit, « @ », upper case). ldapauthenticator escapes
# what it sends to the directory (since 2.0), so this rule is not its injection guard. A
# subconfiguration cannot see what was set before it: another rule goes in a file loaded after
# this one.
c.LDAPAuthenticator.valid_username_regex = ID_PATTERN.pattern
# ldap3 checks no certificate by default (its Tls(validate=CERT_NONE)): with the guide's
# tls_strategy (on_connect or before_bind) a machine in the middle would be sent every password.
# The directory's certificate is checked against the system's CAs, or the CA file an admin adds
# (tls_kwargs' ca_certs_file: this adds to the admin's settings, it replaces none of them).
c.LDAPAuthenticator.tls_kwargs.update({"validate": ssl.CERT_REQUIRED})
# allow_existing_users stays on (JupyterHub's default with an allow-list): a name the roster sync
# adds through the API is let in without a restart; a name it removes is deleted from the hub
# (roster_sync.py), which is what takes the login away.
# No login that lets a stranger in: checked at start, once every configuration file is loaded.
from jupyterhub.app import JupyterHub  # noqa: E402

if JupyterHub.initialized():
    login_guard.install(JupyterHub.instance())
    # One hub, one course: a hub whose base holds another course's groups refuses to start.
    one_course.install(JupyterHub.instance(), COURSE_ID)
c.Authenticator.admin_users.update(_names("COURSE_HUB_ADMINS"))
c.JupyterHub.load_groups.update(GROUPS)
c.JupyterHub.load_roles.extend(
    hub_roles(
        MEMBERS,
        COURSE_ID,
        access_student_servers=os.environ.get("COURSE_HUB_INSTRUCTORS_ACCESS", "0") == "1",
        shared_grader=bool(GRADER),
    )
)

# A hub restart (roster, certificate, upgrade) keeps every server and kernel: the hub leaves
# them running when it stops and finds them again at start (their pid and token are in its
# database). The systemd unit must then stop the hub's process alone (KillMode=process,
# jupyterhub-cours.service); TLJH's SystemdSpawner runs each server in its own unit.
c.JupyterHub.cleanup_servers = False

# Each server runs as its Unix user, from the shared course environment.
if LOCAL_SPAWNER:
    # LocalProcessSpawner that routes only to a port held by the user's own uid: a classmate
    # who binds the port first is refused (verified_spawner.py)
    from verified_spawner import VerifiedLocalProcessSpawner  # noqa: E402

    c.JupyterHub.spawner_class = VerifiedLocalProcessSpawner
    # One student cannot starve the class: each server and its kernels in a capped cgroup
    # (capped_spawner.py); the hub refuses to start if the caps cannot work, unless turned off.
    c.VerifiedLocalProcessSpawner.cgroup_caps = CAPS
    c.VerifiedLocalProcessSpawner.student_memory = MEM_STUDENT
    c.VerifiedLocalProcessSpawner.instructor_memory = MEM_INSTRUCTOR
    c.VerifiedLocalProcessSpawner.cgroup_fs = CGROUP_FS
    if JupyterHub.initialized():
        import capped_spawner  # noqa: E402

        capped_spawner.install(JupyterHub.instance())
elif KUBERNETES:
    # The chart's KubeSpawner: each server a pod of the course's image, under a uid of its own
    # (kube_recipe.py); the course's init container makes the exchange's course folder, owned
    # by the instructor who releases.
    import kube_recipe  # noqa: E402

    if GRADER:
        raise ValueError(
            "COURSE_HUB_GRADER\u00a0: le formgrader partagé n'existe que sur une machine "
            "(the shared formgrader is a one-machine service)"
        )
    EXCHANGE_OWNER = kube_recipe.exchange_owner(
        [m.id for m in MEMBERS if m.role == "instructor"],
        os.environ.get("COURSE_HUB_EXCHANGE_OWNER", ""),
    )
    kube_recipe.check_uids([*(m.id for m in MEMBERS), *_names("COURSE_HUB_ADMINS")])
    c.KubeSpawner.uid = lambda spawner: kube_recipe.uid_of(spawner.user.name)
    c.KubeSpawner.gid = kube_recipe.POD_GID
else:
    # Another spawner (TLJH's SystemdSpawner: one systemd unit per server, on a random port
    # that is free between its pick and the server's start): routed only to a port held by the
    # user's own Unix account too (verified_spawner.py), under the same Unix names.
    # (at start: the spawner class is only known once every configuration file is loaded)
    c.PortOwnerCheckMixin.unix_prefix = UNIX_PREFIX
    if JupyterHub.initialized():
        import verified_spawner  # noqa: E402

        verified_spawner.install(JupyterHub.instance())
    # Its own limits, the same sizes (memory cap, equal CPU weight, task cap); an instructor's
    # are set at spawn.
    if "mem_limit" not in c.Spawner and "mem_limit" not in c.SystemdSpawner:
        c.SystemdSpawner.mem_limit = MEM_STUDENT
    c.SystemdSpawner.unit_extra_properties = {
        "CPUWeight": "100",
        "TasksMax": "512",
        **c.SystemdSpawner.get("unit_extra_properties", {}),
    }
c.Spawner.default_url = "/lab"
c.Spawner.start_timeout = 180
c.Spawner.http_timeout = 180
if not KUBERNETES:  # a pod's command and environment are the image's and the values'
    # cours-singleuser (installed next to jupyterhub-singleuser) runs as the user: it makes the
    # home private and gives an instructor their copy of the course, then starts
    # jupyterhub-singleuser.
    c.Spawner.cmd = [str(ENV_BIN / "cours-singleuser")]
    c.Spawner.environment = {
        "PATH": f"{ENV_BIN}:/usr/local/bin:/usr/bin:/bin",
        "VIRTUAL_ENV": str(PREFIX / "env"),
        "COURSE_ID": COURSE_ID,
        "NBGRADER_EXCHANGE": EXCHANGE,
        "COURSE_HUB_PRIVATE_HOMES": "1" if PRIVATE_HOMES else "0",
    }


def _set_unix_membership(unix_name: str, member: bool) -> None:
    """Keep `unix_name` in (or out of) the Unix group that reads the course template."""
    if os.geteuid() != 0:
        return
    try:
        group = grp.getgrnam(UNIX_GROUP)
        pwd.getpwnam(unix_name)
    except KeyError:
        return  # no such group (template not restricted) or account (not created yet)
    if (unix_name in group.gr_mem) == member:
        return
    flag = "-a" if member else "-d"
    subprocess.run(["gpasswd", flag, unix_name, UNIX_GROUP], check=True, capture_output=True)


def pre_spawn_hook(spawner) -> None:
    """Choose the Jupyter configuration of the user's group (least privilege by default)."""
    groups = {group.name for group in spawner.user.groups}
    role = "instructors" if "instructors" in groups else "students"
    if not KUBERNETES:
        # the spawner sets the server's groups from /etc/group: update it before the start (a
        # demoted instructor leaves the group that reads the template; TLJH's only adds)
        # (TLJH cuts a long name: unix_name gives its account, not `jupyter-` + name)
        _set_unix_membership(unix_name(spawner.user.name, UNIX_PREFIX), role == "instructors")
    if hasattr(spawner, "user_groups"):
        # TLJH's spawner adds the account to these groups at every start (and creates it at the
        # first): the template's group from the hub's groups now, never a list read once at
        # start; TLJH's other groups (tljh-config's users.extra_user_groups) as the admin set them
        name = spawner.user.name
        unix_groups = {
            group: [u for u in users if u != name or group != UNIX_GROUP]
            for group, users in spawner.user_groups.items()
        }
        if role == "instructors":
            unix_groups.setdefault(UNIX_GROUP, []).append(name)
        spawner.user_groups = unix_groups
    if PORT_BASE and not KUBERNETES:  # a pod has an address of its own
        # One port per user: JupyterHub's random port (bind 0, close, start the server) races
        # when a class starts at once; measured: two servers given the same port, the second
        # one's route sent to the first. Below 32768, no program's random port takes it.
        spawner.port = PORT_BASE + spawner.user.id
    if role == "instructors" and hasattr(spawner, "unit_extra_properties"):
        # SystemdSpawner (TLJH): an instructor grades from their server, larger limits
        spawner.mem_limit = MEM_INSTRUCTOR
        spawner.unit_extra_properties = {
            **spawner.unit_extra_properties,
            "CPUWeight": "400",
            "TasksMax": "2048",
        }
    environment = dict(spawner.environment)  # never mutate the shared configured dict
    environment["JUPYTER_CONFIG_PATH"] = str(GROUP_CONFIG / role)
    environment["COURSE_ROLE"] = role
    environment["COURSE_ID"] = COURSE_ID
    spawner.environment = environment
    if KUBERNETES:
        kube_recipe.prepare_pod(spawner, role, COURSE_ID, EXCHANGE_OWNER)


c.Spawner.pre_spawn_hook = pre_spawn_hook

# The roster is the truth while the hub runs: roster_sync.py re-reads it when it changes and
# removes, demotes or adds through the hub's API (load_groups alone only ever adds).
c.JupyterHub.services.append(
    {
        "name": "roster-sync",
        "command": [
            sys.executable,
            os.path.join(os.path.dirname(os.path.abspath(__file__)), "roster_sync.py"),
        ],
        "environment": {
            "COURSE_HUB_ROSTER": ROSTER,
            "COURSE_ID": COURSE_ID,
            "COURSE_HUB_GRADER": GRADER,
            "COURSE_HUB_INSTRUCTORS_GROUP": UNIX_GROUP,
            "COURSE_HUB_UNIX_PREFIX": UNIX_PREFIX,
            "COURSE_HUB_ROSTER_SYNC_EVERY": os.environ.get("COURSE_HUB_ROSTER_SYNC_EVERY", "30"),
        },
    }
)
c.JupyterHub.load_roles.append(
    {
        "name": "roster-sync",
        "scopes": [
            "list:users",
            "read:users",
            "admin:users",
            "list:groups",
            "read:groups",
            "admin:groups",
            "groups",
            "servers",
        ],
        "services": ["roster-sync"],
    }
)

# Idle servers are stopped (their files stay): a class's memory comes back between sittings.
if CULL_TIMEOUT > 0:
    c.JupyterHub.services.append(
        {
            "name": "idle-culler",
            "command": [
                sys.executable,
                "-m",
                "jupyterhub_idle_culler",
                f"--timeout={CULL_TIMEOUT}",
                f"--cull-every={CULL_EVERY}",
            ],
        }
    )
    c.JupyterHub.load_roles.append(
        {
            "name": "idle-culler",
            "scopes": ["list:users", "read:users:activity", "read:servers", "delete:servers"],
            "services": ["idle-culler"],
        }
    )

# The course's shared formgrader: one gradebook and one course folder, in the grading account's
# home, reached at /services/<course id>/ by the `formgrade-<course id>` group (instructors, TAs).
if GRADER:
    grader_home = pwd.getpwnam(GRADER).pw_dir  # the account must exist (useradd -m)
    _set_unix_membership(GRADER, True)  # it copies the course template at its first start
    if JupyterHub.initialized():
        # its fixed port is routed only while the grading account alone listens there: a student
        # who binds it while the service restarts never receives a request (verified_spawner.py)
        import verified_spawner  # noqa: E402

        verified_spawner.guard_service_port(JupyterHub.instance(), COURSE_ID, GRADER_PORT, GRADER)
    c.JupyterHub.services.append(
        {
            "name": COURSE_ID,
            "url": f"http://127.0.0.1:{GRADER_PORT}",
            "command": [str(ENV_BIN / "cours-singleuser")],
            "user": GRADER,
            "cwd": grader_home,
            "environment": {
                **c.Spawner.environment,
                "JUPYTER_CONFIG_PATH": str(GROUP_CONFIG / "instructors"),
                "COURSE_ROLE": "instructors",
                "COURSE_HUB_AUTH_PLUGIN": "jupyterhub",
                # nbgrader's JupyterHubAuthPlugin names its caller from JUPYTERHUB_USER
                "JUPYTERHUB_USER": GRADER,
                "JUPYTERHUB_DEFAULT_URL": "/lab",
            },
        }
    )
    c.JupyterHub.load_roles.append(
        {
            # the plugin keeps nbgrader-<course> in step when a student is added in formgrader
            "name": f"grader-{COURSE_ID}",
            "scopes": [
                f"read:users!user={GRADER}",
                f"read:users:groups!user={GRADER}",
                f"read:groups!group=nbgrader-{COURSE_ID}",
                f"groups!group=nbgrader-{COURSE_ID}",
            ],
            "services": [COURSE_ID],
        }
    )
    # an instructor's own server finds the shared formgrader in nbgrader's course list
    c.Spawner.server_token_scopes = [
        "users:activity!user",
        "access:servers!server",
        f"access:services!service={COURSE_ID}",
    ]
