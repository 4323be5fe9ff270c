"""nbgrader pour les élèves du hub : seulement le cours et l'échange (pas de carnet de notes).

nbgrader config for the hub's students. The hub sets COURSE_ID and NBGRADER_EXCHANGE in every
server's environment (see jupyterhub_config.py), so one file serves every class.
"""

import os

c = get_config()  # noqa: F821 (provided by traitlets when it loads this file)
c.CourseDirectory.course_id = os.environ.get("COURSE_ID", "memoire-tuteur")
c.Exchange.root = os.environ.get("NBGRADER_EXCHANGE", "/srv/nbgrader/exchange")
