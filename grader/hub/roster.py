#!/usr/bin/env python3
"""The class roster: ONE CSV file feeds the hub (who logs in, groups, roles) and nbgrader.

Why one file: a class kept in two places (hub settings and nbgrader's student list) drifts; a
student added to one and forgotten in the other cannot submit, or is missing from the grades.
Why one reader: the hub, `make students` (grading/roster_csv.py), collect and the erasure all
read it here (grading/classroom/ids.py loads this file), so they accept and refuse the same lines.

The file is what a French teacher's spreadsheet writes: UTF-8 with or without BOM, UTF-16 with
BOM or Windows-1252; `,`, `;` or tab; one header line, columns in French or English, any case,
accents optional (unknown columns are refused, a typo would lose a field):
    id (identifiant), first_name (prénom), last_name (nom), email (courriel), role (rôle),
    lms_user_id (kept for nbgrader)
`id` is the hub user name (the Unix name on one machine), checked by ID_PATTERN; `role` is one of
    student (élève)        a learner: the assignment list only
    instructor (enseignant) their own formgrader and course copy, scoped hub rights over students
    ta (assistant)         a teaching assistant: grades in the course's shared formgrader only
A file without a role column is a list of students (least rights). Every bad line is named, with
its number, in French (RosterError.problems); nothing is used from a file with one.

Read by jupyterhub_config.py (every recipe) and roster_sync.py, and by instructors through the
command line, which writes nbgrader's student list:
    cours-roster eleves classe.csv -o eleves.csv && nbgrader db student import eleves.csv
    cours-roster verifier classe.csv
No dependency beyond the standard library: the z2jh hub image loads this file as it is.
"""

from __future__ import annotations

import argparse
import codecs
import csv
import hashlib
import io
import re
import sys
import unicodedata
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "ID_PATTERN",
    "ROLES",
    "Member",
    "RosterError",
    "decode_roster",
    "hub_groups",
    "hub_roles",
    "id_problem",
    "main",
    "parse_roster",
    "read_roster",
    "students_csv",
    "unix_name",
]

ID_PATTERN = re.compile(r"^[a-z][a-z0-9._-]{0,31}\Z")
"""The one id rule (anchored: `match` and `fullmatch` agree, and its `.pattern` is the LDAP
login's): a class member's id is their login everywhere, so it is the strictest name that every
login and nbgrader accept.
- ldapauthenticator's default `valid_username_regex`, ``^[a-z][.a-z0-9_-]*$``: a lower-case
  letter first (no digit, no `_`), then lower-case letters, digits, `.`, `_`, `-`;
- JupyterHub lowercases the name typed at login: an upper-case id would never match it;
- PAM logs in Unix accounts, made by `useradd`: no `@`, `+`, space or accent, 32 characters at
  most (TLJH's `jupyter-` prefix is cut and hashed by unix_name);
- nbgrader names a submission `<student>+<assignment>+<timestamp>` and its fetch_feedback splits
  on `+`: an id holding one could never fetch their feedback;
- an id is a folder name (`submitted/<id>/`) and formgrader writes it raw into its pages'
  scripts: nothing here ends a path, a string or a tag.
A school whose directory allows more changes this one constant (the LDAP login takes its pattern).
"""
ROLES = ("student", "instructor", "ta")
# a header folded (lower case, no accents, no space, `_`, `-`, `'` or `.`) -> its field
_HEADERS = {
    **{name: "id" for name in ("id", "identifiant", "studentid", "login", "utilisateur")},
    **{name: "first_name" for name in ("firstname", "prenom")},
    **{name: "last_name" for name in ("lastname", "nom", "nomdefamille")},
    **{name: "email" for name in ("email", "courriel", "mail", "adresseelectronique")},
    **{name: "role" for name in ("role", "statut")},
    "lmsuserid": "lms_user_id",
}
_ROLE_NAMES = {"student": "student", "eleve": "student", "instructor": "instructor"}
_ROLE_NAMES |= {"enseignant": "instructor", "ta": "ta", "assistant": "ta"}
_EMAIL = re.compile(r"[^@\s]+@[^@\s]+")


class RosterError(ValueError):
    """A roster nothing may be used from: one French sentence per problem, each naming its line
    (the admin or the teacher reads them)."""

    def __init__(self, problems: list[str] | str) -> None:
        self.problems = [problems] if isinstance(problems, str) else list(problems)
        super().__init__("\n".join(self.problems))


@dataclass(frozen=True)
class Member:
    """One line of the roster (`line`: its number in the file, 1 being the header)."""

    id: str
    first_name: str
    last_name: str
    email: str
    role: str
    lms_user_id: str = ""
    line: int = 0


def _shown(text: str) -> str:
    """`text` between French quotes, its invisible characters written as escapes."""
    return (
        "«\u00a0"
        + "".join(
            repr(c)[1:-1] if unicodedata.category(c)[0] in "CZ" and c != " " else c for c in text
        )
        + "\u00a0»"
    )


def id_problem(value: str) -> str | None:
    """Why `value` cannot be a class member's id (ID_PATTERN), in French, or None."""
    if not value:
        return "identifiant vide"
    if ID_PATTERN.fullmatch(value):
        return None
    hint = ""
    if ID_PATTERN.fullmatch(value.lower()):
        hint = f"\u00a0; en minuscules\u00a0: {_shown(value.lower())}"
    return (
        f"identifiant invalide {_shown(value)} (une minuscule d'abord, puis minuscules, chiffres, "
        "«\u00a0.\u00a0», «\u00a0_\u00a0» ou «\u00a0-\u00a0», 32 caractères au plus, comme un "
        "nom de connexion\u00a0: ni espace, ni accent, ni majuscule, ni @, ni + (le séparateur "
        f"des dépôts de nbgrader)){hint}"
    )


def _fold(header: str) -> str:
    text = unicodedata.normalize("NFKD", header.strip().lower())
    text = "".join(ch for ch in text if not unicodedata.combining(ch))
    return re.sub(r"[\s_\-’'.]", "", text)


def decode_roster(data: bytes, source: str = "classe.csv") -> str:
    """The text of a roster file: UTF-8 (BOM or not), UTF-16 with BOM, else Windows-1252."""
    if data.startswith(codecs.BOM_UTF8):
        data = data[len(codecs.BOM_UTF8) :]
    elif data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        try:
            return data.decode("utf-16")
        except UnicodeDecodeError as exc:
            raise RosterError(
                f"{source}\u00a0: UTF-16 illisible à l'octet {exc.start} (fichier tronqué\u00a0?)"
                "\u00a0; enregistrez la liste en «\u00a0CSV UTF-8\u00a0»."
            ) from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    try:
        return data.decode("cp1252")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise RosterError(
            f"{source}, ligne {line}\u00a0: octet {data[exc.start]:#04x} illisible (ni UTF-8 "
            "ni Windows-1252)\u00a0; enregistrez la liste en «\u00a0CSV UTF-8\u00a0»."
        ) from None


def _separator(header_line: str) -> str:
    counts = {sep: header_line.count(sep) for sep in (";", ",", "\t")}
    best = max(counts, key=lambda sep: counts[sep])
    return best if counts[best] else ","


def _header(row: list[str], source: str) -> list[str]:
    """The field of each column; RosterError for an unknown, doubled or missing one."""
    problems: list[str] = []
    fields: list[str] = []
    for raw in row:
        field = _HEADERS.get(_fold(raw), "")
        if not field and raw.strip():
            problems.append(
                f"{source}, ligne 1\u00a0: colonne inconnue {_shown(raw.strip())} (colonnes "
                "reconnues\u00a0: id ou identifiant, prénom, nom, courriel, rôle, lms_user_id)."
            )
        elif field and field in fields:
            problems.append(f"{source}, ligne 1\u00a0: colonne {_shown(raw.strip())} en double.")
        fields.append(field)
    if "id" not in fields and not problems:
        problems.append(f"{source}, ligne 1\u00a0: colonnes manquantes id (ou identifiant).")
    if problems:
        raise RosterError(problems)
    return fields


def _line_problem(values: dict[str, str], seen: dict[str, int]) -> str | None:
    member_id = values.get("id", "")
    problem = id_problem(member_id)
    if problem:
        return problem
    if member_id in seen:
        return f"{_shown(member_id)} figure déjà ligne {seen[member_id]}"
    role = values.get("role", "student")
    if _ROLE_NAMES.get(_fold(role)) is None:
        return (
            f"rôle {_shown(role)} inconnu pour {_shown(member_id)} (valeurs possibles\u00a0: "
            "student ou élève, instructor ou enseignant, ta ou assistant)"
        )
    email = values.get("email", "")
    if email and not _EMAIL.fullmatch(email):
        return f"courriel {_shown(email)} invalide"
    return None


def parse_roster(text: str, source: str = "classe.csv") -> list[Member]:
    """Members of the roster `text`; RosterError naming every line the class could not use."""
    text = text.lstrip("\ufeff")
    lines = text.splitlines()
    if not lines or not lines[0].strip():
        raise RosterError(f"{source}, ligne 1\u00a0: l'en-tête manque (au moins une colonne id).")
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=_separator(lines[0]))
    try:
        return _members(reader, source)
    except csv.Error:  # a cell past the csv module's field limit (131 072 characters)
        raise RosterError(
            f"{source}, ligne {reader.line_num}\u00a0: ligne illisible (une cellule de plus de "
            f"{csv.field_size_limit()} caractères\u00a0?)."
        ) from None


def _members(reader, source: str) -> list[Member]:
    """The members read by `reader` (its header first); RosterError naming every bad line."""
    fields = _header(next(reader), source)
    problems: list[str] = []
    members: list[Member] = []
    seen: dict[str, int] = {}
    for row in reader:
        line = reader.line_num
        if not any(cell.strip() for cell in row):
            continue  # blank line, or Excel's trailing ";;;"
        if len(row) > len(fields) and any(cell.strip() for cell in row[len(fields) :]):
            problems.append(
                f"{source}, ligne {line}\u00a0: {len(row)} valeurs pour {len(fields)} colonnes."
            )
            continue
        values = {
            f: unicodedata.normalize("NFC", cell.strip())
            for f, cell in zip(fields, row, strict=False)
            if f
        }
        problem = _line_problem(values, seen)
        if problem:
            problems.append(f"{source}, ligne {line}\u00a0: {problem}.")
            continue
        seen[values["id"]] = line
        role = _ROLE_NAMES[_fold(values.get("role", "student"))]
        names = ("first_name", "last_name", "email", "lms_user_id")
        members.append(
            Member(values["id"], **{n: values.get(n, "") for n in names}, role=role, line=line)
        )
    if problems:
        raise RosterError(problems)
    return members


def read_roster(path: str | Path) -> list[Member]:
    """Members of the roster file at `path` (RosterError if missing, unreadable or invalid)."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise RosterError(
            f"liste de la classe introuvable\u00a0: {path} (COURSE_HUB_ROSTER sur le hub, "
            "ELEVES=… pour make students)"
        ) from None
    except OSError as exc:
        raise RosterError(f"liste de la classe illisible\u00a0: {path} ({exc.strerror})") from None
    return parse_roster(decode_roster(data, str(path)), str(path))


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
