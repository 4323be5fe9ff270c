"""The course remembers each learner on a real hub: one progress file per learner, in their home.

Two students' servers on a real hub (the shipped jupyterhub_config.py, real Unix users): an
exercise passed in each one's kernel lands in that student's own
``~/.cours-memoire-tuteur/progres.db``, under their hub name, private to their Unix account; a
classmate's kernel cannot read it, and the start page's view shows each their own path.
"""

from __future__ import annotations

import json
import pwd
import secrets
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from classhub import hub_settings, launch_hub, unix_users, write_roster
from conftest import HUB_DIR

pytestmark = pytest.mark.hub

RECORD = (
    "import json\n"
    "from course.progress import exercice_reussi, mon_parcours, progress_path, user_id\n"
    "exercice_reussi('derniere_session_complete')\n"
    "print(json.dumps([str(progress_path()), user_id(), 'exercices réussis' in mon_parcours()"
    "._repr_html_()]))\n"
)


@pytest.fixture(scope="module")
def pair() -> Iterator[tuple[str, str]]:
    tag = secrets.token_hex(2)
    names = (f"prg{tag}ana", f"prg{tag}bob")
    with unix_users(list(names)):
        yield names


def _kernel(hub, name: str) -> str:
    created = hub.server(name, "POST", "/api/kernels", json={"name": "python3"})
    assert created.status_code == 201, created.text
    return created.json()["id"]


def test_each_learner_has_a_private_progress_file_in_their_home(course_env, pair, scratch):
    ana, bob = pair
    workdir = scratch("cours-hub-progres-")
    roster = write_roster(workdir / "classe.csv", {ana: "student", bob: "student"})
    with launch_hub(
        prefix=course_env,
        workdir=workdir,
        roster=roster,
        exchange=workdir / "exchange",
        settings=hub_settings(COURSE_HUB_CULL_TIMEOUT="0"),
        hub_config=HUB_DIR / "jupyterhub_config.py",
    ) as hub:
        for name in pair:
            hub.start_server(name)
        for name in pair:
            hub.wait_ready(name)
        kernels = {name: _kernel(hub, name) for name in pair}
        for name in pair:
            path, learner, shown = json.loads(hub.execute(name, kernels[name], RECORD))
            home = Path(pwd.getpwnam(name).pw_dir)
            assert Path(path) == home / ".cours-memoire-tuteur" / "progres.db"
            assert learner == name and shown  # the hub name, and the start page's view
            info, folder = Path(path).stat(), Path(path).parent.stat()
            assert info.st_uid == folder.st_uid == pwd.getpwnam(name).pw_uid
            assert stat.S_IMODE(info.st_mode) & 0o077 == 0, oct(info.st_mode)
            assert stat.S_IMODE(folder.st_mode) & 0o077 == 0, oct(folder.st_mode)
        # a classmate's kernel cannot read it (its own file, as a positive control, it can)
        ana_file = Path(pwd.getpwnam(ana).pw_dir) / ".cours-memoire-tuteur" / "progres.db"
        bob_file = Path(pwd.getpwnam(bob).pw_dir) / ".cours-memoire-tuteur" / "progres.db"
        for target, expected in ((ana_file, "refusé"), (bob_file, "lu")):
            code = (
                f"try:\n    open({str(target)!r}, 'rb').read(16)\n    print('lu')\n"
                "except PermissionError:\n    print('refusé')\n"
            )
            assert hub.execute(bob, kernels[bob], code).strip() == expected, target
