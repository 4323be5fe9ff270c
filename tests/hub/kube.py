"""Zero to JupyterHub's pods, reproduced on this machine by a real hub without Kubernetes.

`apply_chart_values` turns grader/hub/z2jh/values.yaml into the hub configuration the chart
builds from it (the chart's own jupyterhub_config.py does the same for these keys), then runs the
values' extraConfig. `KubeSpawner` (named like the real one, so `c.KubeSpawner.*` from the values
applies to it) starts each server as its pod would run: the uid and gid the values compute (no
passwd entry), the fsGroup as supplementary group, the user's volume and the shared exchange
mounted at their paths in a private mount namespace, /home, /srv, /opt and /tmp private to the
pod, the image's files at /opt/cours-memoire-tuteur, the image's environment and the values'
extraEnv only (KubeSpawner keeps nothing of the hub's environment), the init containers run
first under the uid and group of their security context (the course's one: the releasing
instructor's, never root), no privilege escalation. The only differences: the network namespace
(loopback, shared) and the kernel are this machine's.

The init containers are the ones KubeSpawner receives: the values' own (dicts) and the one the
chart appends when `singleuser.cloudMetadata.blockWithIptables` is on (its default), a model
object of kubernetes_asyncio, built as the chart builds it. Each pod is first made by
KubeSpawner's own `make_pod` (what a real spawn does, which refuses what Kubernetes would);
the chart's iptables container is not run here (it would change this machine's firewall).
kubernetes_asyncio and KubeSpawner come from the test environment, appended to the hub's path
(`overlay`): the hub's own packages stay first.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import yaml
from jupyterhub.spawner import LocalProcessSpawner
from jupyterhub.utils import maybe_future, random_port
from kubernetes_asyncio import client
from kubespawner.objects import make_pod
from traitlets import Bool, Callable, Dict, Integer, List, Unicode, Union, default

__all__ = ["CHART_METADATA_BLOCK", "KubeSpawner", "apply_chart_values", "dockerfile_env"]

HERE = Path(__file__).resolve().parent
# the base image's PATH (python:3.11-slim-bookworm), that the Dockerfile's ENV PATH extends
BASE_IMAGE_ENV = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
POD_PRIVATE = ["/home", "/srv", "/opt", "/tmp"]
CHART_METADATA_BLOCK = "block-cloud-metadata"  # the chart's own init container


def dockerfile_env(dockerfile: str, stage: str) -> tuple[dict[str, str], str]:
    """The environment and WORKDIR a stage of the Dockerfile gives its containers."""
    stages: dict[str, tuple[dict[str, str], str]] = {}
    env, workdir, current = dict(BASE_IMAGE_ENV), "/", None
    for raw in dockerfile.splitlines():
        words = raw.split()
        if not words or words[0].startswith("#"):
            continue
        if words[0] == "FROM":
            base = words[1]
            env, workdir = (
                (dict(stages[base][0]), stages[base][1])
                if base in stages
                else (
                    dict(BASE_IMAGE_ENV),
                    "/",
                )
            )
            current = words[3] if len(words) > 3 and words[2].upper() == "AS" else None
        elif words[0] == "ENV":
            for assignment in words[1:]:
                key, value = assignment.split("=", 1)
                env[key] = value.replace("$PATH", env.get("PATH", ""))
        elif words[0] == "WORKDIR":
            workdir = words[1]
        if current:
            stages[current] = (env, workdir)
    return stages[stage]


class KubeSpawner(LocalProcessSpawner):
    """A LocalProcessSpawner that runs each server as its Kubernetes pod would (see module)."""

    # the KubeSpawner settings the values use
    uid = Union([Integer(), Callable()], allow_none=True, default_value=None, config=True)
    gid = Union([Integer(), Callable()], allow_none=True, default_value=None, config=True)
    fs_gid = Union([Integer(), Callable()], allow_none=True, default_value=None, config=True)
    image = Unicode(config=True)
    volumes = Dict(config=True)
    volume_mounts = Dict(config=True)
    init_containers = List(config=True)
    allow_privilege_escalation = Bool(False, allow_none=True, config=True)
    # where the reproduction keeps what Kubernetes would: images' files, volumes
    image_binds = Dict(config=True, help="image name -> [[source folder, path in the image]]")
    image_env = Dict(config=True, help="image name -> (environment, WORKDIR) of the image")
    volumes_root = Unicode(config=True, help="folder holding one folder per volume claim")

    @default("env_keep")
    def _env_keep_default(self) -> list[str]:
        return []  # KubeSpawner keeps nothing of the hub's environment

    def user_env(self, env: dict[str, str]) -> dict[str, str]:
        return env  # no passwd lookup: the hub user has no Unix account

    def get_env(self) -> dict[str, str]:
        env = super().get_env()
        env["JUPYTER_IMAGE_SPEC"] = env["JUPYTER_IMAGE"] = self.image
        return env

    async def _value(self, trait: str):
        value = getattr(self, trait)
        return await maybe_future(value(self)) if callable(value) else value

    def _claim(self, claim: str) -> str:
        """A dynamically provisioned volume: created empty, owned by root, fsGroup 2775."""
        folder = Path(self.volumes_root) / claim.format(pvc_name=f"claim-{self.user.name}")
        if not folder.exists():
            folder.mkdir(parents=True)
            if self._fs_gid is not None:
                os.chown(folder, 0, self._fs_gid)
                folder.chmod(0o2775)
        return str(folder)

    async def start(self):
        self.port = random_port()
        uid, gid = await self._value("uid"), await self._value("gid")
        self._fs_gid = await self._value("fs_gid")
        binds = [list(pair) for pair in self.image_binds[self.image]]
        for mount in self.volume_mounts.values():
            volume = self.volumes[mount["name"]]
            binds.append(
                [self._claim(volume["persistentVolumeClaim"]["claimName"]), mount["mountPath"]]
            )
        image_env, workdir = self.image_env[self.image]
        # KubeSpawner's own pod: every init container must be a dict or a V1Container
        pod = make_pod(
            name=f"jupyter-{self.user.name}",
            cmd=[*self.cmd, *self.get_args()],
            port=8888,
            image=self.image,
            uid=uid,
            gid=gid,
            fs_gid=self._fs_gid,
            env=self.get_env(),
            working_dir=workdir,
            init_containers=self.init_containers,
        )
        init = []
        for container in pod.spec.init_containers:
            if container.name == CHART_METADATA_BLOCK:
                continue  # iptables on this machine's firewall: not reproduced
            # make_pod maps a dict's own keys to the model's; what they hold stays as given
            context = container.security_context
            assert isinstance(context, dict), container  # the values' own, as the hook left it
            env = {_field(item, "name"): _field(item, "value") for item in container.env or []}
            init.append(
                {
                    "command": container.command,
                    "env": env,
                    "uid": context["runAsUser"],  # the hook's: a real uid, never root
                    "gid": context["runAsGroup"],
                    "no_new_privs": context["allowPrivilegeEscalation"] is False,
                }
            )
        env = {**image_env, **self.get_env()}
        env.setdefault("HOME", "/")  # the container runtime's value for a uid without entry
        spec = {
            "binds": binds,
            "tmpfs": POD_PRIVATE,
            "init": init,
            "uid": uid,
            "gid": gid if gid is not None else 0,
            "groups": [self._fs_gid] if self._fs_gid is not None else [],
            "no_new_privs": not self.allow_privilege_escalation,
            "workdir": workdir,
            "env": env,
            "cmd": [*self.cmd, *self.get_args()],
        }
        command = [
            shutil.which("unshare") or "unshare",
            "--mount",
            "--propagation",
            "private",
            "--",
            "/usr/bin/python3",
            str(HERE / "pod.py"),
        ]
        self.log.info("Pod %s: uid %s gid %s image %s", self.user.name, uid, gid, self.image)
        from subprocess import Popen

        self.proc = Popen(
            command,
            env={"COURSE_POD_SPEC": json.dumps(spec), "PATH": "/usr/sbin:/usr/bin:/sbin:/bin"},
            start_new_session=True,
        )
        self.pid = self.proc.pid
        return ("127.0.0.1", self.port)


def _field(item, name: str):
    """A field of a Kubernetes object given as a dict or as a model object."""
    return item[name] if isinstance(item, dict) else getattr(item, name)


def chart_metadata_block(single: dict):
    """The init container the chart appends to every pod (cloudMetadata.blockWithIptables)."""
    metadata = single.get("cloudMetadata", {})
    if not metadata.get("blockWithIptables", True):
        return None
    return client.V1Container(
        name=CHART_METADATA_BLOCK,
        image="quay.io/jupyterhub/k8s-network-tools:4.4.0",
        command=["iptables", "--append", "OUTPUT", "--protocol", "tcp"]
        + ["--destination", metadata.get("ip", "169.254.169.254")]
        + ["--destination-port", "80", "--jump", "DROP"],
        security_context=client.V1SecurityContext(
            privileged=True,
            run_as_user=0,
            capabilities=client.V1Capabilities(add=["NET_ADMIN"]),
        ),
    )


def apply_chart_values(
    c, values_path: str | Path, reproduction: dict, load_subconfig, mounts: dict[str, str]
) -> None:
    """What the chart's jupyterhub_config.py sets from these values, then their extraConfig.

    `mounts` maps a folder of the hub's pod (where hub.extraFiles are mounted) to the folder of
    this machine that holds the same files; `load_subconfig` is the hub's configuration loader's.
    """
    text = Path(values_path).read_text(encoding="utf-8")
    for pod_folder, here in mounts.items():
        text = text.replace(pod_folder, here)
    values = yaml.safe_load(text)
    single = values["singleuser"]
    c.JupyterHub.authenticator_class = "dummy"  # the chart's default, unless the values name one
    c.JupyterHub.spawner_class = KubeSpawner
    c.JupyterHub.services = []
    c.JupyterHub.load_roles = []
    c.KubeSpawner.cmd = [single["cmd"]] if isinstance(single["cmd"], str) else single["cmd"]
    c.KubeSpawner.default_url = single["defaultUrl"]
    c.KubeSpawner.environment = dict(single["extraEnv"])
    c.KubeSpawner.fs_gid = single["fsGid"]
    c.KubeSpawner.uid = single.get("uid", 1000)  # the chart's default, before extraConfig
    c.KubeSpawner.allow_privilege_escalation = single.get("allowPrivilegeEscalation", False)
    c.KubeSpawner.image = f"{single['image']['name']}:{single['image']['tag']}"
    c.KubeSpawner.init_containers = list(single.get("initContainers", []))
    block = chart_metadata_block(single)
    if block is not None:
        c.KubeSpawner.init_containers.append(block)
    storage = single["storage"]
    assert storage["type"] == "dynamic"
    volumes = {"volume-{username}": {"persistentVolumeClaim": {"claimName": "{pvc_name}"}}}
    mounts = {
        "volume-{username}": {"name": "volume-{username}", "mountPath": storage["homeMountPath"]}
    }
    for volume in storage.get("extraVolumes", []):
        volumes[volume["name"]] = volume
    for index, mount in enumerate(storage.get("extraVolumeMounts", [])):
        mounts[f"{index}-{mount['name']}"] = mount
    c.KubeSpawner.volumes = volumes
    c.KubeSpawner.volume_mounts = mounts
    c.KubeSpawner.start_timeout = 180
    c.KubeSpawner.http_timeout = 180
    for section, settings in values["hub"].get("config", {}).items():
        for key, value in settings.items():
            setattr(c[section], key, value)
    for key, setting in reproduction.items():
        setattr(c.KubeSpawner, key, setting)
    for name, code in sorted(values["hub"].get("extraConfig", {}).items()):
        namespace = {"c": c, "load_subconfig": load_subconfig, "__name__": name}
        exec(compile(code, f"extraConfig/{name}", "exec"), namespace)
