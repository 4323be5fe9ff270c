"""Drop-in for The Littlest JupyterHub (TLJH): the course's class settings on top of TLJH's own.

Copy to /opt/tljh/config/jupyterhub_config.d/cours-memoire-tuteur.py, put the class roster in
/opt/tljh/config/classe.csv (see roster.py; hub names, without TLJH's `jupyter-` prefix), then
`sudo tljh-config reload hub`. TLJH keeps its authenticator, its user creation, its
SystemdSpawner (each learner is the Unix user `jupyter-<name>`) and its idle culler, given the
course's hour instead of TLJH's default 600 s (a value set with
`sudo tljh-config set services.cull.timeout ...` stays); this file adds the roster's users,
groups and roles, the per-group Jupyter configuration, the shared course environment and
nbgrader's exchange, and makes the hub route each learner only to a port their
`jupyter-<name>` account holds (SystemdSpawner's random port is free between its pick and the
server's start: see verified_spawner.py, tests/hub/test_tljh_ports.py).
"""

import os

c = get_config()  # noqa: F821 (provided by traitlets when TLJH loads this file)

os.environ.setdefault("COURSE_HUB_ROSTER", "/opt/tljh/config/classe.csv")
os.environ.setdefault("COURSE_HUB_PREFIX", "/opt/cours-memoire-tuteur")
os.environ.setdefault("COURSE_HUB_EXCHANGE", "/srv/nbgrader/exchange")
os.environ.setdefault("COURSE_HUB_INSTRUCTORS_GROUP", "cours-enseignants")
os.environ["COURSE_HUB_UNIX_PREFIX"] = "jupyter-"  # TLJH's Unix names
os.environ["COURSE_HUB_SPAWNER"] = "keep"  # TLJH's SystemdSpawner creates the Unix users
os.environ["COURSE_HUB_CULL_TIMEOUT"] = "0"  # TLJH runs its own jupyterhub-idle-culler

_etc = os.path.join(os.environ["COURSE_HUB_PREFIX"], "etc")
load_subconfig(os.path.join(_etc, "jupyterhub_config.py"))  # noqa: F821
# TLJH creates each Unix account at its first start and adds it to its spawner's user_groups at
# every start: the course's pre-spawn hook sets them per user from the hub's groups (the roster
# sync keeps those equal to the roster), so a demoted instructor leaves the Unix group that reads
# the course template (solutions, hidden tests) at their next start, a promoted one joins it.

# TLJH's own culler stops a server idle for 600 s by default (tljh-config's services.cull.timeout);
# the course's guide says an hour, as on one machine and Kubernetes. This file, loaded as a
# subconfiguration, cannot see TLJH's services: the hub's own list, once every file is loaded, is
# changed where it still says TLJH's default. Any other value is the admin's and stays.
TLJH_DEFAULT_CULL = "--timeout=600"
COURSE_CULL = "--timeout=3600"


def _an_hour_for_tljhs_culler(change: dict) -> None:
    """TLJH's cull-idle service at TLJH's default timeout gets the course's hour."""
    for service in change["new"]:
        command = service.get("command") or []
        if service.get("name") == "cull-idle" and TLJH_DEFAULT_CULL in command:
            command[command.index(TLJH_DEFAULT_CULL)] = COURSE_CULL


from jupyterhub.app import JupyterHub  # noqa: E402

# TLJH makes every hub admin root: at their server's start its spawner puts their Unix account in
# `jupyterhub-admins`, which TLJH's installer gave passwordless sudo (/etc/sudoers.d). Said in the
# hub's log at every start, with the names (ADMIN.md, TLJH section).
ADMINS_ARE_ROOT = (
    "TLJH\u00a0: les administrateurs du hub ({names}) sont root sur cette machine (TLJH leur "
    "donne sudo sans mot de passe, groupe jupyterhub-admins, au démarrage de leur serveur)\u00a0: "
    "ils lisent les copies, le carnet de notes et la liste de la classe. N'y nommez que le service "
    "informatique\u00a0; les enseignants n'en ont pas besoin (grader/hub/ADMIN.md, TLJH)."
)


def _say_admins_are_root(app: JupyterHub) -> None:
    """Once the hub has loaded its users, name in its log the admins TLJH makes root."""
    from jupyterhub import orm

    load_users = app.init_users

    async def init_users_then_warn() -> None:
        await load_users()
        admins = sorted(u.name for u in app.db.query(orm.User).filter(orm.User.admin.is_(True)))
        if admins:
            app.log.warning(ADMINS_ARE_ROOT.format(names=", ".join(admins)))

    app.init_users = init_users_then_warn


if JupyterHub.initialized():
    JupyterHub.instance().observe(_an_hour_for_tljhs_culler, names="services")
    _say_admins_are_root(JupyterHub.instance())
