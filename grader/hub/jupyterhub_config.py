"""JupyterHub configuration for one class of the course (one machine, real Unix users).

Why each choice:
- every learner's server runs as that learner's Unix user (LocalProcessSpawner), from the shared
  course environment built by install-course-env.sh (a venv readable by everyone, not under /root);
- two hub groups decide what a server shows: `instructors` get formgrader and their own copy of
  the course, `students` get only the assignment list (nbgrader's server and lab extensions are
  switched per group through JUPYTER_CONFIG_PATH, set in a pre-spawn hook);
- nbgrader's exchange is one shared folder (mode 1777) named in every server's environment;
- Unix permissions, not hidden menus, keep learners apart: home folders are made 0700
  (by cours-singleuser, which runs as the user, so it works with any spawner).

Settings come from environment variables so one file serves every class:
  COURSE_INSTRUCTORS, COURSE_STUDENTS, COURSE_HUB_ADMINS   comma-separated Unix user names
  COURSE_HUB_PREFIX    install prefix of the course env    (default /opt/cours-memoire-tuteur)
  COURSE_HUB_EXCHANGE  nbgrader exchange folder            (default /srv/nbgrader/exchange)
  COURSE_ID            nbgrader course id                  (default memoire-tuteur)
  COURSE_HUB_PRIVATE_HOMES  "0" leaves home folder modes alone (default: made 0700)
  COURSE_HUB_SPAWNER   "local" (default): LocalProcessSpawner; "keep": keep the spawner class
                       another config chose (The Littlest JupyterHub's SystemdSpawner)
The authenticator is JupyterHub's default (PAM: the users' Unix passwords). User and group
lists are added to whatever another config already allows. Load this file from another config
with `load_subconfig(...)` to change ports, authenticator or database.
"""

import os
from pathlib import Path

c = get_config()  # noqa: F821 (provided by traitlets when it loads this file)

PREFIX = Path(os.environ.get("COURSE_HUB_PREFIX", "/opt/cours-memoire-tuteur"))
ENV_BIN = PREFIX / "env" / "bin"
GROUP_CONFIG = PREFIX / "etc"
EXCHANGE = os.environ.get("COURSE_HUB_EXCHANGE", "/srv/nbgrader/exchange")
COURSE_ID = os.environ.get("COURSE_ID", "memoire-tuteur")
PRIVATE_HOMES = os.environ.get("COURSE_HUB_PRIVATE_HOMES", "1") != "0"


def _names(variable: str) -> list[str]:
    return [name.strip() for name in os.environ.get(variable, "").split(",") if name.strip()]


INSTRUCTORS = _names("COURSE_INSTRUCTORS")
STUDENTS = _names("COURSE_STUDENTS")

# Who may log in, and in which group (added to what another config may already allow).
c.Authenticator.allowed_users.update(INSTRUCTORS + STUDENTS)
c.Authenticator.admin_users.update(_names("COURSE_HUB_ADMINS"))
c.JupyterHub.load_groups.update(
    {"instructors": {"users": INSTRUCTORS}, "students": {"users": STUDENTS}}
)

# Each server runs as its Unix user, from the shared course environment.
if os.environ.get("COURSE_HUB_SPAWNER", "local") == "local":
    c.JupyterHub.spawner_class = "jupyterhub.spawner.LocalProcessSpawner"
# cours-singleuser (installed next to jupyterhub-singleuser) runs as the user: it makes the home
# private and gives an instructor their copy of the course, then starts jupyterhub-singleuser.
c.Spawner.cmd = [str(ENV_BIN / "cours-singleuser")]
c.Spawner.default_url = "/lab"
c.Spawner.start_timeout = 180
c.Spawner.http_timeout = 180
c.Spawner.environment = {
    "PATH": f"{ENV_BIN}:/usr/local/bin:/usr/bin:/bin",
    "VIRTUAL_ENV": str(PREFIX / "env"),
    "COURSE_ID": COURSE_ID,
    "NBGRADER_EXCHANGE": EXCHANGE,
    "COURSE_HUB_PRIVATE_HOMES": "1" if PRIVATE_HOMES else "0",
}


def pre_spawn_hook(spawner) -> None:
    """Choose the Jupyter configuration of the user's group (least privilege by default)."""
    groups = {group.name for group in spawner.user.groups}
    role = "instructors" if "instructors" in groups else "students"
    environment = dict(spawner.environment)  # never mutate the shared configured dict
    environment["JUPYTER_CONFIG_PATH"] = str(GROUP_CONFIG / role)
    environment["COURSE_ROLE"] = role
    spawner.environment = environment


c.Spawner.pre_spawn_hook = pre_spawn_hook
