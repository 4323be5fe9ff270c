"""The hub configuration the Zero to JupyterHub chart builds from values.yaml, for a test hub.

`chart_hub` lays out what `helm --set-file` mounts (the course's hub files named in
`hub.extraFiles`, and the class roster) in one folder, copies KubeSpawner and its models from
the test environment into a folder appended to the hub's path (the hub's own packages stay
first), and writes the configuration file that runs tests/hub/kube.py's `apply_chart_values`
(the chart's settings, then the values' extraConfig, with traitlets' own `load_subconfig`).
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import yaml
from classhub import HUB_DIR, write_roster
from installed_course import copy_distributions
from packaging.utils import canonicalize_name

__all__ = ["ChartHub", "chart_hub"]

LIST_DISTRIBUTIONS = (
    "import importlib.metadata as m; print(*(d.metadata['Name'] for d in m.distributions()))"
)


@dataclass(frozen=True)
class ChartHub:
    config: Path  # the hub's configuration file (launch_hub's hub_config)
    roster: Path  # the mounted class roster
    settings: dict[str, str]  # hub.extraEnv, its mounted paths made this machine's


def _distributions(course_env: Path) -> frozenset[str]:
    """The distributions the hub's environment holds (normalised names)."""
    listed = subprocess.run(
        [str(course_env / "env" / "bin" / "python"), "-c", LIST_DISTRIBUTIONS],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return frozenset(canonicalize_name(name) for name in listed)


def chart_hub(
    work: Path, values_path: Path, course_env: Path, members: dict[str, str], reproduction: dict
) -> ChartHub:
    """Everything a test hub needs to run `values_path` as the chart would, in `work`."""
    values = yaml.safe_load(values_path.read_text(encoding="utf-8"))
    files = values["hub"]["extraFiles"].values()
    etc = work / "hub-etc"
    etc.mkdir()
    (mounted,) = {Path(f["mountPath"]).parent for f in files}
    for file in files:
        if file["mountPath"].endswith(".py"):
            name = Path(file["mountPath"]).name
            shutil.copy(HUB_DIR / name, etc / name)
    roster = write_roster(etc / "classe.csv", members)
    overlay = work / "kube-overlay"
    copy_distributions(("jupyterhub-kubespawner",), overlay, skip=_distributions(course_env))
    mounts = {str(mounted): str(etc)}
    config = work / "kube_config.py"
    config.write_text(
        "import sys\n"
        f"sys.path.insert(0, {str(Path(__file__).parent)!r})\n"
        f"sys.path.append({str(overlay)!r})  # KubeSpawner's models, after the hub's own\n"
        "from kube import apply_chart_values\n"
        "c = get_config()  # noqa\n"
        f"apply_chart_values(c, {str(values_path)!r}, {reproduction!r},\n"
        f"                   load_subconfig, {mounts!r})  # noqa\n"
    )
    settings = {
        key: value.replace(str(mounted), str(etc))
        for key, value in values["hub"]["extraEnv"].items()
    }
    return ChartHub(config, roster, settings)
