#!/usr/bin/env python3
"""Keep the running hub equal to the class roster, without a restart (a hub-managed service).

Why: JupyterHub reads the roster's users and groups at start only, and then only adds
(`load_groups` never removes a member, `allow_existing_users` keeps a deleted line's account).
A student taken out of the roster would still log in; a demoted instructor would keep the
`instructors` group, its role and formgrader. This service re-reads the roster whenever the
file changes (and once at start) and makes the hub say the same, through the hub's REST API
with the service's own scoped token:
- a name no longer in the roster: its server stopped and the hub user deleted (tokens, cookies
  and the login go with it); hub admins and the shared grading account are kept;
- a new name: created, so it may log in;
- the course's four groups (instructors, students, formgrade-<course>, nbgrader-<course>) made
  exactly the roster's; anyone whose groups changed has their server stopped (the next start
  takes the new role), and a demoted instructor leaves the Unix group that reads the template.
A bad roster (duplicate id, invalid name, unknown role) is refused whole, the line named in
the hub's log: nothing is applied, the hub keeps the last good class. Removals and demotions
are applied before additions, each change on its own: a name the hub refuses (a new line without
its Unix account, on one machine) is named in the log with the hub's reason and tried again at
the next look, and holds back nothing else.

Settings: those of jupyterhub_config.py (COURSE_HUB_ROSTER, COURSE_ID, COURSE_HUB_GRADER,
COURSE_HUB_INSTRUCTORS_GROUP, COURSE_HUB_UNIX_PREFIX) and COURSE_HUB_ROSTER_SYNC_EVERY, seconds
between two looks at the file (default 30). `--once`: one sync, exit status 2 on a bad roster.
"""

from __future__ import annotations

import argparse
import grp
import hashlib
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import requests

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from roster import Member, RosterError, hub_groups, read_roster, unix_name  # noqa: E402

__all__ = ["Plan", "HubApi", "main", "plan_sync", "sync_once"]


@dataclass
class Plan:
    """What the hub must change to match the roster."""

    create: list[str] = field(default_factory=list)
    delete: list[str] = field(default_factory=list)
    group_add: dict[str, list[str]] = field(default_factory=dict)
    group_remove: dict[str, list[str]] = field(default_factory=dict)
    restart: list[str] = field(default_factory=list)  # servers to stop: their role changed
    demoted: list[str] = field(default_factory=list)  # out of `instructors`
    failed: dict[str, str] = field(default_factory=dict)  # name: why the hub refused a change


def plan_sync(
    members: list[Member],
    users: dict[str, dict],
    groups: dict[str, list[str]],
    course_id: str,
    keep: set[str],
) -> Plan:
    """The changes from the hub's `users` ({name: model}) and `groups` to the roster's."""
    wanted = hub_groups(members, course_id)
    grader_group = f"formgrade-{course_id}"
    ids = {m.id for m in members}
    plan = Plan()
    plan.create = sorted(ids - set(users))
    plan.delete = sorted(
        name for name, model in users.items() if name not in ids | keep and not model.get("admin")
    )
    changed: set[str] = set()
    for group, spec in wanted.items():
        target = set(spec["users"])
        if group == grader_group:
            target |= {n for n in groups.get(group, []) if n in keep}  # the grading account
        current = set(groups.get(group, []))
        add, remove = sorted(target - current), sorted(current - target - set(plan.delete))
        if add:
            plan.group_add[group] = add
        if remove:
            plan.group_remove[group] = remove
        changed |= (set(add) | set(remove)) & set(users)
    plan.restart = sorted(changed - set(plan.delete))
    was_instructor = set(groups.get("instructors", []))
    plan.demoted = sorted(
        set(plan.group_remove.get("instructors", [])) | set(plan.delete) & was_instructor
    )
    return plan


class HubApi:
    """The hub's REST API, as this service (its token from the hub's environment)."""

    def __init__(self, url: str, token: str) -> None:
        self.url = url.rstrip("/")
        self.session = requests.Session()
        self.session.headers["Authorization"] = f"token {token}"

    def call(self, method: str, path: str, **kwargs) -> requests.Response:
        response = self.session.request(method, self.url + path, timeout=60, **kwargs)
        if response.status_code >= 400 and not (method == "GET" and response.status_code == 404):
            raise RuntimeError(f"{method} {path}: {response.status_code} {response.text[:300]}")
        return response

    def users(self) -> dict[str, dict]:
        found: dict[str, dict] = {}
        offset = 0
        while True:  # paginated: a class of 200 is more than one page
            page = self.call(
                "GET",
                f"/users?offset={offset}&limit=200",
                headers={"Accept": "application/jupyterhub-pagination+json"},
            ).json()
            for model in page["items"]:
                found[model["name"]] = model
            if not page["_pagination"].get("next"):
                return found
            offset = page["_pagination"]["next"]["offset"]

    def group_members(self, name: str) -> list[str] | None:
        response = self.call("GET", f"/groups/{name}")
        return None if response.status_code == 404 else response.json()["users"]


def _leave_unix_group(names: list[str]) -> None:
    """A demoted instructor leaves the Unix group that reads the course template (root only)."""
    group_name = os.environ.get("COURSE_HUB_INSTRUCTORS_GROUP", "cours-enseignants")
    prefix = os.environ.get("COURSE_HUB_UNIX_PREFIX", "")
    if os.geteuid() != 0:
        return
    try:
        members = grp.getgrnam(group_name).gr_mem
    except KeyError:
        return
    for name in names:
        account = unix_name(name, prefix)  # TLJH cuts a long one
        if account in members:
            subprocess.run(["gpasswd", "-d", account, group_name], capture_output=True)


def sync_once(api: HubApi, roster: str, course_id: str) -> Plan:
    """Read the roster (RosterError: nothing applied), then make the hub match it."""
    members = read_roster(roster)
    if not members:
        raise RosterError(f"{roster}\u00a0: aucune ligne (la classe vide est refusée)")
    users = api.users()
    wanted = hub_groups(members, course_id)
    groups: dict[str, list[str]] = {}
    for name in wanted:
        found = api.group_members(name)
        if found is None:
            api.call("POST", f"/groups/{name}")
            found = []
        groups[name] = found
    keep = {name for name in [os.environ.get("COURSE_HUB_GRADER", "")] if name}
    plan = plan_sync(members, users, groups, course_id, keep)

    def apply(names: list[str], method: str, path: str, **kwargs) -> None:
        """One change; a refusal is recorded for each name it concerns, the others go on."""
        try:
            api.call(method, path, **kwargs)
        except (RuntimeError, requests.RequestException) as error:
            for name in names:
                plan.failed.setdefault(name, str(error))

    # Rights are taken away first: a new line the hub refuses (a missing Unix account) never
    # holds back a removal or a demotion made in the same edit.
    for name in plan.delete:  # the hub stops the server first
        apply([name], "DELETE", f"/users/{name}")
    for group, names in plan.group_remove.items():
        apply(names, "DELETE", f"/groups/{group}/users", json={"users": names})
    _leave_unix_group(plan.demoted)  # before any server stops: no read of the solutions left
    for name in plan.restart:
        # asked of each, not only of those the list of users showed running: a server started
        # after that list was read and before the group change would keep the old role (and the
        # Unix group in its processes); the hub answers 204 for a server that is not running
        apply([name], "DELETE", f"/users/{name}/server")
    for name in plan.create:  # one by one: the hub refuses a whole list for one bad name
        apply([name], "POST", f"/users/{name}")
    for group, names in plan.group_add.items():
        ready = [name for name in names if name not in plan.failed]
        if ready:
            apply(ready, "POST", f"/groups/{group}/users", json={"users": ready})
    return plan


def _fingerprint(path: str) -> str:
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return ""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--once", action="store_true", help="une seule synchronisation")
    args = parser.parse_args(argv)
    api = HubApi(os.environ["JUPYTERHUB_API_URL"], os.environ["JUPYTERHUB_API_TOKEN"])
    roster = os.environ.get("COURSE_HUB_ROSTER", "/srv/jupyterhub/classe.csv")
    course_id = os.environ.get("COURSE_ID", "memoire-tuteur")
    every = float(os.environ.get("COURSE_HUB_ROSTER_SYNC_EVERY", "30"))
    tried = None
    while True:
        seen = _fingerprint(roster)
        if seen != tried:
            tried = seen  # a refused file is reported once, until it changes
            try:
                plan = sync_once(api, roster, course_id)
            except RosterError as error:
                print(
                    f"roster-sync\u00a0: liste refusée, rien n'est changé\u00a0: {error}",
                    flush=True,
                )
                if args.once:
                    return 2
            except (RuntimeError, requests.RequestException) as error:
                tried = None  # the hub will answer later: try again
                print(f"roster-sync\u00a0: le hub n'a pas répondu ({error})", flush=True)
                if args.once:
                    return 1
            else:
                print(f"roster-sync\u00a0: liste appliquée {plan}", flush=True)
                for name, reason in plan.failed.items():
                    print(f"roster-sync\u00a0: {name} non appliqué\u00a0: {reason}", flush=True)
                if plan.failed:
                    tried = None  # the rest is applied; these are tried again
                    if args.once:
                        return 1
        if args.once:
            return 0
        time.sleep(every)


if __name__ == "__main__":
    sys.exit(main())
