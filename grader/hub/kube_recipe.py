"""What only the Kubernetes recipe adds to the course's hub configuration (jupyterhub_config.py).

Why a module of its own: the chart mounts the course's hub files (hub.extraFiles) and its
extraConfig only loads jupyterhub_config.py, so the login guard, the roster (allow-list, groups,
roles), the roster sync and the exchange checks are written once for every recipe. What a pod
needs beyond them lives here, loaded by jupyterhub_config.py when COURSE_HUB_SPAWNER=kubernetes:
- one Unix uid per hub user, derived from the name alone (a hash of the roster id): on the shared
  exchange volume, nbgrader's permissions keep students apart as on one machine, and the same
  person keeps the same uid whatever happens to the hub's database (a lost or rebuilt database
  renumbers its rows; uids taken from them would hand one student's files to another and break
  collect's owner check); two names of the class on one uid stop the hub at start. The uid has
  no passwd entry in the image, cours-singleuser gives it one (nss_wrapper);
- the course's own init container (`exchange-permissions`, values.yaml) learns the course id and
  runs AS the releasing instructor's uid, never root: it makes the course's folder in the shared
  exchange by creating it (no chown), so a share that maps root to `nobody` (NFS root_squash,
  the default) is no obstacle; every other init container is left exactly as it is: the chart
  appends its own (`block-cloud-metadata`, a KubeSpawner model object, not a dict);
- the instructors' image (solutions, hidden tests), larger limits and the class's uid names
  (collect checks who owns each submission) for the `instructors` group only, chosen at each
  spawn from the hub's groups, which the roster sync keeps equal to the roster.
No dependency beyond the standard library and JupyterHub (the chart's hub image loads it as is).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable

from jupyterhub import orm

__all__ = [
    "EXCHANGE_INIT_CONTAINER",
    "POD_GID",
    "UID_BASE",
    "check_uids",
    "exchange_owner",
    "prepare_pod",
    "uid_of",
    "with_exchange_env",
]

# uids from 100000 (above the images' and most systems' own, 65534 `nobody` included) to below 2^31
UID_BASE = 100_000
UID_SPAN = 2**30
# the name of the course's init container in values.yaml (singleuser.initContainers)
EXCHANGE_INIT_CONTAINER = "exchange-permissions"
# every pod's group (singleuser.fsGid, c.KubeSpawner.gid): the init container's too
POD_GID = 100


def uid_of(name: str) -> int:
    """The Unix uid of a hub user's pods: the same for the same name, on any hub."""
    digest = hashlib.sha256(name.encode("utf-8")).digest()
    return UID_BASE + int.from_bytes(digest[:8], "big") % UID_SPAN


def check_uids(names: Iterable[str]) -> None:
    """Refuse a class in which two names would share a uid (they would share their files)."""
    seen: dict[int, str] = {}
    for name in sorted(set(names)):
        uid = uid_of(name)
        if uid in seen:
            raise ValueError(
                f"uid\u00a0: «\u00a0{seen[uid]}\u00a0» et «\u00a0{name}\u00a0» auraient le même "
                f"uid ({uid})\u00a0; changez l'un des deux identifiants dans la liste de la classe "
                "(two names of the class share a uid)"
            )
        seen[uid] = name


def exchange_owner(instructors: list[str], chosen: str) -> str:
    """The instructor who releases (owns the course's folder in the exchange)."""
    owner = chosen or next(iter(instructors), "")
    if owner not in instructors:
        raise ValueError(
            "COURSE_HUB_EXCHANGE_OWNER\u00a0: «\u00a0" + owner + "\u00a0» n'est pas un "
            "enseignant de la liste de la classe\u00a0; le dossier du cours dans l'échange "
            "appartient à l'enseignant qui publie (the exchange owner must be an instructor)"
        )
    return owner


def with_exchange_env(
    containers: Iterable[object], env: list[dict[str, str]], uid: int
) -> list[object]:
    """The init containers, the course's own one given `env` and run as `uid` (a copy); the
    others untouched."""
    result: list[object] = []
    for container in containers:
        if isinstance(container, dict) and container.get("name") == EXCHANGE_INIT_CONTAINER:
            context = {
                **(container.get("securityContext") or {}),
                "runAsUser": uid,
                "runAsGroup": POD_GID,
                "runAsNonRoot": True,
                "allowPrivilegeEscalation": False,
            }
            container = {
                **container,
                "env": [*(container.get("env") or []), *env],
                "securityContext": context,
            }
        result.append(container)
    return result


def prepare_pod(spawner, role: str, course_id: str, owner: str) -> None:
    """Per-spawn settings of a pod: the init container's values, the instructors' image."""
    spawner.init_containers = with_exchange_env(
        spawner.init_containers,
        [
            {"name": "COURSE_ID", "value": course_id},
            {"name": "COURSE_EXCHANGE_OWNER_UID", "value": str(uid_of(owner))},
        ],
        uid_of(owner),
    )
    if role != "instructors":
        return
    # the image with the course template (solutions, hidden tests): instructors only
    spawner.image = os.environ["COURSE_HUB_INSTRUCTOR_IMAGE"]
    # grading a class (nbgrader, the sandbox, --jobs 2) needs more than a student
    spawner.mem_limit = "4G"
    spawner.mem_guarantee = "1G"
    spawner.cpu_limit = 2.0
    spawner.cpu_guarantee = 0.5
    # names of the class's uids: nbgrader collect checks who owns each submission
    spawner.environment = {
        **spawner.environment,
        "COURSE_HUB_PASSWD": ",".join(
            f"{user.name}:{uid_of(user.name)}" for user in spawner.user.db.query(orm.User)
        ),
    }
