"""JupyterHub configuration for one class of the course (one machine, real Unix users).

Why each choice:
- every learner's server runs as that learner's Unix user (LocalProcessSpawner), from the shared
  course environment built by install-course-env.sh (a venv readable by everyone, not under /root);
- two hub groups decide what a server shows: `instructors` get formgrader and their own copy of
  the course, `students` get only the assignment list (nbgrader's server and lab extensions are
  switched per group through JUPYTER_CONFIG_PATH, set in a pre-spawn hook);
- nbgrader's exchange is one shared folder (mode 1777) named in every server's environment;
- Unix permissions, not hidden menus, keep learners apart: home folders are made 0700.

Settings come from environment variables so one file serves every class:
  COURSE_INSTRUCTORS, COURSE_STUDENTS, COURSE_HUB_ADMINS   comma-separated Unix user names
  COURSE_HUB_PREFIX    install prefix of the course env    (default /opt/cours-memoire-tuteur)
  COURSE_HUB_EXCHANGE  nbgrader exchange folder            (default /srv/nbgrader/exchange)
  COURSE_ID            nbgrader course id                  (default memoire-tuteur)
  COURSE_HUB_PRIVATE_HOMES  "0" leaves home folder modes alone (default: made 0700)
The authenticator is JupyterHub's default (PAM: the users' Unix passwords). Load this file from
another config with `load_subconfig(...)` to change ports, authenticator or database.
"""

import os
import pwd
import shutil
import stat
from pathlib import Path

c = get_config()  # noqa: F821 (provided by traitlets when it loads this file)

PREFIX = Path(os.environ.get("COURSE_HUB_PREFIX", "/opt/cours-memoire-tuteur"))
ENV_BIN = PREFIX / "env" / "bin"
GROUP_CONFIG = PREFIX / "etc"
COURSE_TEMPLATE = PREFIX / "share" / "cours"
EXCHANGE = os.environ.get("COURSE_HUB_EXCHANGE", "/srv/nbgrader/exchange")
COURSE_ID = os.environ.get("COURSE_ID", "memoire-tuteur")
COURSE_DIR_NAME = "cours-memoire-tuteur"
PRIVATE_HOMES = os.environ.get("COURSE_HUB_PRIVATE_HOMES", "1") != "0"


def _names(variable: str) -> list[str]:
    return [name.strip() for name in os.environ.get(variable, "").split(",") if name.strip()]


INSTRUCTORS = _names("COURSE_INSTRUCTORS")
STUDENTS = _names("COURSE_STUDENTS")

# Who may log in, and in which group.
c.Authenticator.allowed_users = set(INSTRUCTORS + STUDENTS)
c.Authenticator.admin_users = set(_names("COURSE_HUB_ADMINS"))
c.JupyterHub.load_groups = {
    "instructors": {"users": INSTRUCTORS},
    "students": {"users": STUDENTS},
}

# Each server runs as its Unix user, from the shared course environment.
c.JupyterHub.spawner_class = "jupyterhub.spawner.LocalProcessSpawner"
c.Spawner.cmd = [str(ENV_BIN / "jupyterhub-singleuser")]
c.Spawner.default_url = "/lab"
c.Spawner.start_timeout = 180
c.Spawner.http_timeout = 180
c.Spawner.environment = {
    "PATH": f"{ENV_BIN}:/usr/local/bin:/usr/bin:/bin",
    "VIRTUAL_ENV": str(PREFIX / "env"),
    "COURSE_ID": COURSE_ID,
    "NBGRADER_EXCHANGE": EXCHANGE,
}


def _chown_tree(path: Path, uid: int, gid: int) -> None:
    os.chown(path, uid, gid)
    for parent, dirs, files in os.walk(path):
        for name in dirs + files:
            os.chown(os.path.join(parent, name), uid, gid, follow_symlinks=False)


def prepare_instructor(user_name: str) -> Path:
    """Give an instructor their own copy of the course (once), owned by them."""
    account = pwd.getpwnam(user_name)
    course_dir = Path(account.pw_dir) / COURSE_DIR_NAME
    if not course_dir.exists() and COURSE_TEMPLATE.is_dir():
        shutil.copytree(COURSE_TEMPLATE, course_dir, symlinks=True)
        _chown_tree(course_dir, account.pw_uid, account.pw_gid)
    return course_dir


def make_home_private(user_name: str) -> None:
    """Home folders 0700: another learner must not read a cached submission or feedback."""
    home = Path(pwd.getpwnam(user_name).pw_dir)
    if home.is_dir() and stat.S_IMODE(home.stat().st_mode) & 0o077:
        home.chmod(0o700)


def pre_spawn_hook(spawner) -> None:
    """Choose the Jupyter configuration of the user's group (least privilege by default)."""
    groups = {group.name for group in spawner.user.groups}
    role = "instructors" if "instructors" in groups else "students"
    if PRIVATE_HOMES:
        make_home_private(spawner.user.name)
    environment = dict(spawner.environment)  # never mutate the shared configured dict
    environment["JUPYTER_CONFIG_PATH"] = str(GROUP_CONFIG / role)
    environment["COURSE_ROLE"] = role
    if role == "instructors":
        environment["COURSE_DIR"] = str(prepare_instructor(spawner.user.name))
    spawner.environment = environment


c.Spawner.pre_spawn_hook = pre_spawn_hook
