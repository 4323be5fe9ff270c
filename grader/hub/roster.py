#!/usr/bin/env python3
"""The class roster: ONE CSV file feeds the hub (who logs in, groups, roles) and nbgrader.

Why one file: a class kept in two places (hub settings and nbgrader's student list) drifts; a
student added to one and forgotten in the other cannot submit, or is missing from the grades.

Columns (a header line; `,` or `;` separated, UTF-8, Excel's BOM accepted):
    id, first_name, last_name, email, role      (lms_user_id kept for nbgrader if present)
`id` is the hub user name (the Unix name on one machine), `role` is one of
    student      a learner: the assignment list only
    instructor   their own formgrader and course copy, scoped hub rights over the students
    ta           a teaching assistant: grades in the course's shared formgrader only

Read by jupyterhub_config.py (plain hub, TLJH) and the z2jh extraConfig (hub_groups, hub_roles),
and by instructors through the command line, which writes nbgrader's student list:
    cours-roster eleves classe.csv -o eleves.csv && nbgrader db student import eleves.csv
    cours-roster verifier classe.csv
No dependency beyond the standard library: the z2jh hub image loads this file as it is.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import io
import re
import sys
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "ID_PATTERN",
    "ROLES",
    "Member",
    "RosterError",
    "hub_groups",
    "hub_roles",
    "main",
    "parse_roster",
    "read_roster",
    "students_csv",
    "unix_name",
]

ROLES = ("student", "instructor", "ta")
COLUMNS = ("id", "first_name", "last_name", "email", "role")
# JupyterHub lowercases names and nbgrader ids must match them; no separator of CSV, passwd or URLs,
# nor nbgrader's « + » (a submission is `<student>+<assignment>+<timestamp>`: its fetch_feedback
# splits on it and fails for an id holding one).
# Every recipe's login must take these ids: jupyterhub_config.py gives the same rule to the LDAP
# login (ldapauthenticator's own default refuses a leading digit and « @ »).
ID_PATTERN = r"^[a-z0-9_][a-z0-9_.@-]*$"
_VALID_ID = re.compile(ID_PATTERN)


class RosterError(ValueError):
    """A roster the hub must not start with (message in French: the admin reads it)."""


@dataclass(frozen=True)
class Member:
    """One line of the roster."""

    id: str
    first_name: str
    last_name: str
    email: str
    role: str
    lms_user_id: str = ""


def _dialect(text: str) -> str:
    header = text.split("\n", 1)[0]
    return ";" if header.count(";") > header.count(",") else ","


def parse_roster(text: str, source: str = "classe.csv") -> list[Member]:
    """Members of the roster `text`; RosterError on any line the hub could not use."""
    reader = csv.DictReader(io.StringIO(text.lstrip("\ufeff")), delimiter=_dialect(text))
    fields = [name.strip() for name in reader.fieldnames or []]
    reader.fieldnames = fields
    missing = [name for name in ("id", "role") if name not in fields]
    if missing:
        raise RosterError(
            f"{source}\u00a0: colonnes manquantes {', '.join(missing)} "
            f"(en-tête attendu\u00a0: {','.join(COLUMNS)})"
        )
    members: list[Member] = []
    seen: dict[str, int] = {}
    for line, row in enumerate(reader, start=2):
        values = {key: (value or "").strip() for key, value in row.items() if key}
        if not any(values.values()):
            continue  # blank line
        member_id, role = values.get("id", ""), values.get("role", "")
        if not member_id:
            raise RosterError(f"{source}, ligne {line}\u00a0: identifiant vide")
        if not _VALID_ID.match(member_id):
            raise RosterError(
                f"{source}, ligne {line}\u00a0: identifiant invalide «\u00a0{member_id}\u00a0» "
                "(minuscules, chiffres et _ . @ - seulement, comme le nom du hub\u00a0; "
                "pas de +, le séparateur des dépôts de nbgrader)"
            )
        if member_id in seen:
            raise RosterError(
                f"{source}, ligne {line}\u00a0: «\u00a0{member_id}\u00a0» figure déjà "
                f"ligne {seen[member_id]}"
            )
        if role not in ROLES:
            raise RosterError(
                f"{source}, ligne {line}\u00a0: rôle «\u00a0{role}\u00a0» inconnu pour "
                f"«\u00a0{member_id}\u00a0» "
                f"(valeurs possibles\u00a0: {', '.join(ROLES)})"
            )
        seen[member_id] = line
        members.append(
            Member(
                id=member_id,
                first_name=values.get("first_name", ""),
                last_name=values.get("last_name", ""),
                email=values.get("email", ""),
                role=role,
                lms_user_id=values.get("lms_user_id", ""),
            )
        )
    return members


def read_roster(path: str | Path) -> list[Member]:
    """Members of the roster file at `path` (RosterError if missing or invalid)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise RosterError(
            f"liste de la classe introuvable\u00a0: {path} (réglez COURSE_HUB_ROSTER)"
        ) from None
    except UnicodeDecodeError:
        raise RosterError(f"{path}\u00a0: le fichier doit être en UTF-8") from None
    return parse_roster(text, str(path))


def _ids(members: list[Member], *roles: str) -> list[str]:
    return [m.id for m in members if m.role in roles]


def hub_groups(members: list[Member], course_id: str) -> dict[str, dict[str, list[str]]]:
    """JupyterHub's load_groups for the class.

    `instructors` and `students` pick each server's Jupyter configuration (formgrader or the
    assignment list); `formgrade-<course>` and `nbgrader-<course>` are the groups nbgrader's
    JupyterHubAuthPlugin reads (who grades the course in its shared formgrader, who takes it).
    """
    return {
        "instructors": {"users": _ids(members, "instructor")},
        "students": {"users": _ids(members, "student")},
        f"formgrade-{course_id}": {"users": _ids(members, "instructor", "ta")},
        f"nbgrader-{course_id}": {"users": _ids(members, "student", "instructor")},
    }


def hub_roles(
    members: list[Member],
    course_id: str,
    *,
    access_student_servers: bool = False,
    shared_grader: bool = False,
) -> list[dict]:
    """JupyterHub roles of the class staff: scoped rights instead of hub admin.

    Instructors see the users and groups of the hub's admin page, start and stop the students'
    servers (a stuck server in class), but open a student's JupyterLab (their files) only when
    `access_student_servers` is chosen (one scope per student: a single-user server does not
    resolve `!group=` filters, JupyterHub's HubAuth.check_scopes). Graders (instructors and TAs)
    reach the course's shared formgrader service when `shared_grader` is on.
    """
    instructor_scopes = [
        "admin-ui",
        "list:users",
        "read:users",
        "read:groups",
        "read:servers!group=students",
        "servers!group=students",
    ]
    if access_student_servers:
        instructor_scopes += [f"access:servers!user={name}" for name in _ids(members, "student")]
    roles = [{"name": "cours-enseignant", "groups": ["instructors"], "scopes": instructor_scopes}]
    if shared_grader:
        roles.append(
            {
                "name": f"formgrade-{course_id}",
                "groups": [f"formgrade-{course_id}"],
                "scopes": [
                    f"access:services!service={course_id}",
                    "list:services",
                    f"read:services!service={course_id}",
                ],
            }
        )
    return roles


def unix_name(hub_name: str, unix_prefix: str = "") -> str:
    """The Unix account of hub user `hub_name`: the name itself on one machine; with a prefix
    (The Littlest JupyterHub's `jupyter-`), TLJH's own name, cut at 26 characters and followed by
    5 characters of its hash when longer (tljh/normalize.py): an e-mail id is such a name, and
    `jupyter-` + name would name no account (a demoted instructor kept in the template's group)."""
    name = unix_prefix + hub_name
    if not unix_prefix or len(name) < 26:
        return name
    return f"{name[:26]}-{hashlib.sha256(name.encode('utf-8')).hexdigest()[:5]}"


def students_csv(members: list[Member], unix_prefix: str = "") -> str:
    """nbgrader's student list (`nbgrader db student import`): students only, never staff.

    `unix_prefix` is added to each id where nbgrader names students after a Unix account that
    differs from the hub name (The Littlest JupyterHub: `jupyter-<name>`).
    """
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    with_lms = any(m.lms_user_id for m in members)
    writer.writerow(["id", "first_name", "last_name", "email", *(["lms_user_id"] * with_lms)])
    for m in members:
        if m.role == "student":
            row = [unix_name(m.id, unix_prefix), m.first_name, m.last_name, m.email]
            writer.writerow(row + ([m.lms_user_id] if with_lms else []))
    return out.getvalue()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="cours-roster",
        description="Liste de la classe\u00a0: vérifier le fichier, écrire la liste des élèves "
        "pour «\u00a0nbgrader db student import\u00a0».",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    check = commands.add_parser("verifier", help="vérifier le fichier et résumer la classe")
    check.add_argument("roster", help="le fichier de la classe (CSV)")
    students = commands.add_parser("eleves", help="écrire la liste des élèves pour nbgrader")
    students.add_argument("roster", help="le fichier de la classe (CSV)")
    students.add_argument("-o", "--out", help="fichier à écrire (défaut\u00a0: la sortie standard)")
    students.add_argument(
        "--prefixe-unix",
        default="",
        help="préfixe des comptes Unix (The Littlest JupyterHub\u00a0: jupyter-)",
    )
    args = parser.parse_args(argv)
    try:
        members = read_roster(args.roster)
    except RosterError as error:
        print(f"cours-roster\u00a0: {error}", file=sys.stderr)
        return 2
    if args.command == "verifier":
        counts = {role: len(_ids(members, role)) for role in ROLES}
        print(
            f"{args.roster}\u00a0: {counts['student']} élève(s), "
            f"{counts['instructor']} enseignant(s), {counts['ta']} assistant(s)"
        )
        return 0
    text = students_csv(members, args.prefixe_unix)
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
