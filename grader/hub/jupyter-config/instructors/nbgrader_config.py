"""nbgrader pour les enseignants du hub : leur copie du cours, le cours et l'échange.

nbgrader config for the hub's instructors. Each instructor works in their own copy of the course
(COURSE_DIR, copied from the shared template at first start by the hub). The course's own grading
settings (grader/nbgrader_config.py: time limits, hidden tests, feedback) are loaded first, then the
hub decides where the course lives, its id and the exchange. The course's shared formgrader (a hub
service, COURSE_HUB_AUTH_PLUGIN=jupyterhub) asks JupyterHub who takes the course, as nbgrader
documents for several graders (JupyterHubAuthPlugin and the nbgrader-<course> group).
"""

import os

c = get_config()  # noqa: F821 (provided by traitlets when it loads this file)
_root = os.path.expanduser(os.environ.get("COURSE_DIR", "~/cours-memoire-tuteur"))
_course_config = os.path.join(_root, "grader", "nbgrader_config.py")
if os.path.isfile(_course_config):
    load_subconfig(_course_config)  # noqa: F821
c.CourseDirectory.root = _root
c.CourseDirectory.course_id = os.environ.get("COURSE_ID", "memoire-tuteur")
c.Exchange.root = os.environ.get("NBGRADER_EXCHANGE", "/srv/nbgrader/exchange")
if os.environ.get("COURSE_HUB_AUTH_PLUGIN") == "jupyterhub":
    c.Authenticator.plugin_class = "nbgrader.auth.JupyterHubAuthPlugin"
