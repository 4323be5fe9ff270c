"""One hub serves one course: a second course id is refused at start, with the reason.

Why: the course's hub groups are global (`instructors`, `students`), there is one course id, one
roster and one exchange folder owned by the one account that releases. A hub whose database
already holds another course's groups (`nbgrader-<id>`, `formgrade-<id>`: the same hub restarted
with another COURSE_ID for a second class) would mix both classes' rights; a COURSE_ID naming
two courses would give nbgrader a course that exists nowhere. Both stop the hub before it loads
its users. Loaded by jupyterhub_config.py (one machine, TLJH) and the z2jh values' extraConfig.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["course_id_problem", "install", "other_courses"]

# nbgrader's course ids are folder names in the exchange: one name, no separator, no path
_COURSE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
_COURSE_GROUP = re.compile(r"(?:nbgrader|formgrade)-(.+)")
_WHY = (
    "un hub par cours (groupes globaux, un seul identifiant de cours, une seule liste, un seul "
    "dossier d'échange)\u00a0: pour un second cours, un second hub (une autre release du chart, "
    "une autre base du hub)"
)


def course_id_problem(course_id: str) -> str | None:
    """Why `course_id` is not the id of exactly one course (None when it is)."""
    if _COURSE_ID.fullmatch(course_id):
        return None
    return (
        f"COURSE_ID «\u00a0{course_id}\u00a0» n'est pas l'identifiant d'un seul cours "
        f"(lettres, chiffres, point, tiret, tiret bas)\u00a0; {_WHY}"
    )


def other_courses(group_names: Iterable[str], course_id: str) -> list[str]:
    """Course ids other than `course_id` whose nbgrader groups the hub already holds."""
    found = {m.group(1) for name in group_names if (m := _COURSE_GROUP.fullmatch(name))}
    return sorted(found - {course_id})


def install(app: object, course_id: str) -> None:
    """Stop `app` (the JupyterHub being configured) before it loads users if it has 2 courses."""
    load_users = app.init_users

    async def init_users_if_one_course() -> None:
        from jupyterhub import orm

        problem = course_id_problem(course_id)
        if problem is None:
            others = other_courses((g.name for g in app.db.query(orm.Group)), course_id)
            if others:
                problem = (
                    f"ce hub sert déjà le cours «\u00a0{others[0]}\u00a0» (ses groupes "
                    f"nbgrader-{others[0]}, formgrade-{others[0]} sont dans sa base), pas "
                    f"«\u00a0{course_id}\u00a0»\u00a0; {_WHY}"
                )
        if problem:
            app.exit(
                f"Le hub de la classe refuse de démarrer\u00a0: {problem} "
                "(grader/hub/ADMIN.md, «\u00a0Un hub par cours\u00a0»)."
            )
            return
        await load_users()

    app.init_users = init_users_if_one_course
