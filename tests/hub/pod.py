"""Start one process as a Kubernetes pod would run it, on this machine, without Kubernetes.

Run as root by `unshare --mount --propagation private -- python3 pod.py` with the pod's
specification (JSON) in the environment variable COURSE_POD_SPEC:
  binds        [[source, target], ...]  the image's files and the pod's volumes, at their paths
  tmpfs        [path, ...]              folders the pod sees empty (its own /home, /srv, /tmp...)
  init         [{command, env, uid, gid, no_new_privs}, ...]  init containers, as their uid
  uid, gid, groups                      the container's user: the pod's uid, gid, fsGroup
  no_new_privs                          allowPrivilegeEscalation: false
  workdir, env, cmd                     the image's WORKDIR, the container's environment, command
The process keeps this pid (exec), so the spawner that started it stops it by its id. Only the
standard library: it runs with Debian's python3 before any environment is mounted.
"""

from __future__ import annotations

import ctypes
import json
import os
import subprocess
import sys

__all__ = ["main"]

PR_SET_NO_NEW_PRIVS = 38
STAGE = "/mnt"


def _mount(*args: str) -> None:
    subprocess.run(["mount", *args], check=True)


def main() -> None:
    spec = json.loads(os.environ["COURSE_POD_SPEC"])
    os.umask(0o022)  # a container runtime's, whatever the hub that started this runs with
    # Stage every source first: the tmpfs below may hide where it lives (/opt, /tmp...).
    _mount("-t", "tmpfs", "-o", "mode=0700", "cours-pod-stage", STAGE)
    staged = []
    for index, (source, target) in enumerate(spec["binds"]):
        stage = os.path.join(STAGE, str(index))
        os.mkdir(stage)
        _mount("--bind", source, stage)
        staged.append((stage, target))
    for path in spec["tmpfs"]:
        mode = "1777" if path == "/tmp" else "0755"
        _mount("-t", "tmpfs", "-o", f"mode={mode}", "cours-pod", path)
    for stage, target in sorted(staged, key=lambda item: item[1].count("/")):
        os.makedirs(target, exist_ok=True)
        _mount("--move", stage, target)
    for container in spec["init"]:
        env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", **container["env"]}
        # its own uid and group, the pod's fsGroup as supplementary group, as the kubelet does
        groups = ",".join(map(str, spec["groups"]))
        user = [f"--reuid={container['uid']}", f"--regid={container['gid']}"]
        user += [f"--groups={groups}"] if groups else ["--clear-groups"]
        user += ["--no-new-privs"] if container["no_new_privs"] else []
        subprocess.run(["setpriv", *user, "--", *container["command"]], env=env, check=True)
    subprocess.run(["umount", STAGE], check=True)

    os.setgroups(spec["groups"])
    os.setgid(spec["gid"])
    os.setuid(spec["uid"])
    if spec.get("no_new_privs"):
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS)")
    os.chdir(spec["workdir"])
    env = spec["env"]
    os.execvpe(spec["cmd"][0], spec["cmd"], env)


if __name__ == "__main__":
    sys.exit(main())
