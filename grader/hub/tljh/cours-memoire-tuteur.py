"""Drop-in for The Littlest JupyterHub (TLJH): the course's class settings on top of TLJH's own.

Copy to /opt/tljh/config/jupyterhub_config.d/cours-memoire-tuteur.py, then
`sudo tljh-config reload hub`. TLJH keeps its authenticator, its user creation and its
SystemdSpawner (each learner is the Unix user `jupyter-<name>`); this file adds the two groups,
the per-group Jupyter configuration, the shared course environment and nbgrader's exchange.
Edit the roster below (hub user names, without TLJH's `jupyter-` prefix).
"""

import os

c = get_config()  # noqa: F821 (provided by traitlets when TLJH loads this file)

os.environ.setdefault("COURSE_INSTRUCTORS", "prof")
os.environ.setdefault("COURSE_STUDENTS", "")  # e.g. "ana,bob,cam"
os.environ.setdefault("COURSE_HUB_PREFIX", "/opt/cours-memoire-tuteur")
os.environ.setdefault("COURSE_HUB_EXCHANGE", "/srv/nbgrader/exchange")
os.environ["COURSE_HUB_SPAWNER"] = "keep"  # TLJH's SystemdSpawner creates the Unix users

load_subconfig(  # noqa: F821
    os.path.join(os.environ["COURSE_HUB_PREFIX"], "etc", "jupyterhub_config.py")
)
