"""TLJH: a long hub name has a cut Unix name, and the course must find that account.

The Littlest JupyterHub names each learner's Unix account `jupyter-<name>`, but cuts it at 26
characters and adds 5 characters of its hash when it is longer (tljh/normalize.py, reproduced in
tljh_spawner.py). A roster id of 18 characters or more (an e-mail address, a double surname) is
such a name. The course's own `jupyter-` + name then names no account: a demoted instructor would
silently stay in the Unix group that reads the solutions and the hidden tests, and nbgrader's
student list would name accounts that do not exist. Real Unix accounts and a real group here.
"""

from __future__ import annotations

import grp
import os
import secrets
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from classhub import unix_users
from conftest import HUB_DIR
from tljh_spawner import generate_system_username

pytestmark = [pytest.mark.hub, pytest.mark.recette("tljh")]


@pytest.fixture
def long_instructor(hub_requirements) -> Iterator[tuple[str, str, str]]:
    """(hub name, TLJH's Unix name, a Unix group): the account made as TLJH makes it, in the
    group as TLJH's user_groups put it when the name was an instructor's."""
    tag = secrets.token_hex(2)
    name = f"ldn{tag}-jeanne-dupont-martin"  # 27 characters: TLJH cuts jupyter-<name>
    account = generate_system_username("jupyter-" + name)
    assert account != "jupyter-" + name  # the case under test: a cut name
    group = f"cours-ens-{tag}"
    subprocess.run(["groupadd", group], check=True, capture_output=True)
    try:
        with unix_users([account]):
            subprocess.run(["gpasswd", "-a", account, group], check=True, capture_output=True)
            assert account in grp.getgrnam(group).gr_mem  # the control: a member before
            yield name, account, group
    finally:
        subprocess.run(["groupdel", group], capture_output=True)


def _in_hub_dir(code: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """`code` run as the hub runs the course's modules (their folder first on sys.path)."""
    return subprocess.run(
        [sys.executable, "-c", f"import sys; sys.path.insert(0, {str(HUB_DIR)!r})\n{code}"],
        env={**{k: v for k, v in os.environ.items() if not k.startswith("COURSE_")}, **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_the_course_names_tljh_accounts_as_tljh_does():
    sys.path.insert(0, str(HUB_DIR))
    from roster import unix_name

    for name in ("ana", "a" * 17, "b" * 18, "jean.dupont@univ-exemple.fr", "x" * 60):
        assert unix_name(name, "jupyter-") == generate_system_username("jupyter-" + name)
    # one machine: the hub name is the Unix name, whatever its length
    assert unix_name("jean.dupont@univ-exemple.fr") == "jean.dupont@univ-exemple.fr"


def test_roster_sync_takes_a_long_named_demoted_instructor_out_of_the_group(long_instructor):
    name, account, group = long_instructor
    done = _in_hub_dir(
        f"import roster_sync\nroster_sync._leave_unix_group([{name!r}])",
        {"COURSE_HUB_INSTRUCTORS_GROUP": group, "COURSE_HUB_UNIX_PREFIX": "jupyter-"},
    )
    assert done.returncode == 0, done.stderr
    assert account not in grp.getgrnam(group).gr_mem  # no read of the solutions left


def test_the_tljh_hook_takes_a_long_named_demoted_instructor_out(long_instructor, tmp_path):
    """The drop-in's pre-spawn hook, at the demoted instructor's next start (now a student)."""
    name, account, group = long_instructor
    prefix = tmp_path / "prefix"
    (prefix / "etc").mkdir(parents=True)
    for module in HUB_DIR.glob("*.py"):  # what the installer puts in $PREFIX/etc
        (prefix / "etc" / module.name).write_bytes(module.read_bytes())
    (tmp_path / "classe.csv").write_text(f"id,role\n{name},student\n", encoding="utf-8")
    config = tmp_path / "tljh_config.py"
    config.write_text(
        f"import sys\nsys.path.insert(0, {str(Path(__file__).parent)!r})\n"
        "from tljh_spawner import UserCreatingSpawner\n"
        "c = get_config()\n"
        "c.JupyterHub.spawner_class = UserCreatingSpawner\n"
        f"load_subconfig({str(HUB_DIR / 'tljh' / 'cours-memoire-tuteur.py')!r})\n",
        encoding="utf-8",
    )
    done = _in_hub_dir(
        "from types import SimpleNamespace as NS\n"
        "from traitlets.config.loader import PyFileConfigLoader\n"
        f"c = PyFileConfigLoader({str(config)!r}).load_config()\n"
        f"user = NS(name={name!r}, id=1, groups=[NS(name='students')])\n"
        "spawner = NS(user=user, port=0, environment={}, mem_limit=None,\n"
        "             unit_extra_properties={}, user_groups={})\n"
        "c.Spawner.pre_spawn_hook(spawner)\n",
        {
            "COURSE_HUB_PREFIX": str(prefix),
            "COURSE_HUB_ROSTER": str(tmp_path / "classe.csv"),
            "COURSE_HUB_INSTRUCTORS_GROUP": group,
        },
    )
    assert done.returncode == 0, done.stderr
    assert account not in grp.getgrnam(group).gr_mem


def test_nbgrader_student_list_names_tljh_accounts(tmp_path):
    sys.path.insert(0, str(HUB_DIR))
    from roster import parse_roster, students_csv

    name = "jeanne.dupont-martin.lyon"  # 25 characters: TLJH cuts jupyter-<name>
    text = students_csv(parse_roster(f"id,role\n{name},student\nana,student\n"), "jupyter-")
    ids = [line.split(",")[0] for line in text.splitlines()[1:]]
    assert ids == [generate_system_username("jupyter-" + name), "jupyter-ana"]
