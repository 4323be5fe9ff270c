"""The small class the erasure's attack tests share (tests/grading/privacy/test_erase_*.py,
tests/grading/test_attack_places.py): ana, ben and cyr registered, each with a submitted
notebook, a roster and an exchange, built in a few seconds (no grading); the erasure run on it
(``_erase``, ``_assert_proved``), a learner added, a control copy of the class, the commands a
teacher types, and the git clones the course-files tests make. One home for this set-up: each
test file holds the tests of one place the erasure searches (learner_places.py's scans)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from grading_course import copy_course
from nbgrader.api import Gradebook

__all__ = [
    "ROSTER",
    "CLASS_LIST",
    "petite_classe_template",
    "petite_classe",
    "_setup",
    "_erase",
    "_enrol",
    "_copy_class",
    "_class_list",
    "_released_tp",
    "_dry_run_in_two_gigabytes",
    "_assert_proved",
    "_git",
    "_clone",
    "_make_from",
    "_ERASE_AS_USER",
    "_erased_as_another_teacher",
]

ROSTER = (
    "identifiant;prénom;nom;courriel\n"
    "ana;Ana;Martin;ana.martin@exemple.fr\n"
    "ben;Ben;Durand;ben.durand@exemple.fr\n"
    "cyr;Cyr;Petit;\n"
)
# the class list a teacher keeps beside the hub's recipes (ADMIN.md's ``cours-roster``), naming ana
CLASS_LIST = "id,nom,courriel\nana,Ana Martin,ana.martin@exemple.fr\n"


@pytest.fixture(scope="session")
def petite_classe_template(tmp_path_factory) -> Path:
    """The small class, built once per worker (never written: each test gets its own copy,
    ``petite_classe``): ana, ben, cyr registered, each with a submitted notebook; a roster; an
    exchange."""
    base = tmp_path_factory.mktemp("petite-classe")
    grader = copy_course(base / "cours")
    (grader / "eleves.csv").write_text(ROSTER, encoding="utf-8")
    with Gradebook(f"sqlite:///{grader / 'gradebook.db'}") as gb:
        gb.update_or_create_student(
            "ana", first_name="Ana", last_name="Martin", email="ana.martin@exemple.fr"
        )
        gb.update_or_create_student(
            "ben", first_name="Ben", last_name="Durand", email="ben.durand@exemple.fr"
        )
        gb.update_or_create_student("cyr", first_name="Cyr", last_name="Petit")
    for sid in ("ana", "ben", "cyr"):
        folder = grader / "submitted" / sid / "oublier"
        folder.mkdir(parents=True)
        (folder / "oublier.ipynb").write_text(f'{{"copie de": "{sid}"}}')
    exchange = base / "echange"
    (exchange / "memoire-tuteur" / "inbound").mkdir(parents=True)
    (exchange / "memoire-tuteur" / "feedback").mkdir(parents=True)
    return base


@pytest.fixture
def petite_classe(petite_classe_template, tmp_path) -> dict[str, Path]:
    """A test's own copy of the small class (ana, ben, cyr; a roster; an exchange)."""
    for part in ("cours", "echange"):
        shutil.copytree(petite_classe_template / part, tmp_path / part, symlinks=True)
    grader = tmp_path / "cours" / "grader"
    exchange = tmp_path / "echange"
    return {
        "grader": grader,
        "roster": grader / "eleves.csv",
        "exchange": exchange,
        "tmp": tmp_path,
    }


def _setup(c, roster: Path | None = None):
    """The erasure's options for the small class (`roster`: another class list)."""
    from grading.erase_learner import Setup

    return Setup(grader_dir=c["grader"], roster=roster or c["roster"], exchange=c["exchange"])


def _erase(c, sid: str, control: str = "cyr", roster: Path | None = None):
    """`sid` erased from the small class, confirmed, `control` the witness: what it did (it
    raises ErasureError when it refuses)."""
    from grading.erase_learner import erase

    return erase(sid, _setup(c, roster), confirm=True, control=control)


def _enrol(c, sid: str, first: str, last: str, email: str = "") -> None:
    """A learner added to the small class: her gradebook row and her roster line."""
    with Gradebook(f"sqlite:///{c['grader'] / 'gradebook.db'}") as gb:
        gb.update_or_create_student(sid, first_name=first, last_name=last, email=email or None)
    with c["roster"].open("a", encoding="utf-8") as roster:
        roster.write(f"{sid};{first};{last};{email}\n")


def _copy_class(c, name: str = "avant") -> dict:
    """The small class as it is now, copied (course and exchange): a control erased there
    leaves the class itself untouched."""
    before = c["tmp"] / name
    shutil.copytree(c["tmp"] / "cours", before / "cours", symlinks=True)
    shutil.copytree(c["exchange"], before / "echange", symlinks=True)
    control = dict(c, grader=before / "cours" / "grader", exchange=before / "echange")
    control["roster"] = control["grader"] / "eleves.csv"
    return control


def _class_list(c) -> Path:
    """`CLASS_LIST` written where a teacher keeps it, beside the hub's recipes
    (grader/hub/classe.csv): a file of hers, not the course's."""
    kept = c["grader"] / "hub" / "classe.csv"
    kept.write_text(CLASS_LIST, encoding="utf-8")
    return kept


def _released_tp(c) -> tuple[str, dict, dict]:
    """The TP as released to the class (notebooks/oublier/oublier.ipynb), one of its lines
    naming « ana » as data, as the TP names its sample learner (« alice »): that line, its cell,
    the notebook."""
    release = c["grader"].parent / "notebooks" / "oublier" / "oublier.ipynb"
    release.parent.mkdir(parents=True)
    given = "Les tests utilisent la base de `ana` (son `user_id`) et de `bob`."
    cell = {"cell_type": "markdown", "id": "c1", "metadata": {}, "source": [given + "\n"]}
    nb = {"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    release.write_text(json.dumps(nb), encoding="utf-8")
    return given, cell, nb


def _dry_run_in_two_gigabytes(c, sid: str) -> str:
    """``python -m grading.erase_learner`` (a dry run) as a teacher starts it, limited to 2 GiB
    of address space (a small hub's container): what it says."""
    import resource
    import subprocess

    from grading_course import BIN, tool_env

    command = [str(BIN / "python"), "-m", "grading.erase_learner", "--eleves", str(c["roster"])]
    command += ["--echange", str(c["exchange"]), "--temoin", "cyr", "--", sid]

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (2 * 2**30, 2 * 2**30))

    proc = subprocess.run(
        command,
        cwd=c["grader"],
        env=tool_env(BIN),
        capture_output=True,
        text=True,
        timeout=300,
        preexec_fn=limited,
    )
    return proc.stdout + proc.stderr


def _assert_proved(c, sid: str, what: str) -> None:
    """The erasure of `sid` in the small class is proved; else the test fails on `what` (the
    thing that blocked it) and the refusal's start."""
    from grading.erase_learner import ErasureError

    try:
        result = _erase(c, sid)
    except ErasureError as exc:
        pytest.fail(f"{what} bloque l'effacement de «\u00a0{sid}\u00a0»\u00a0: {str(exc)[:1500]}")
    assert not result.failures, result.failures


def _git(course: Path, *args: str) -> None:
    """git run in `course` as a teacher with a name and an e-mail (no global configuration)."""
    import subprocess

    git = ("git", "-c", "user.name=prof", "-c", "user.email=prof@exemple.fr")
    subprocess.run([*git, *args], cwd=course, check=True, capture_output=True)


def _clone(course: Path, *paths: str) -> None:
    """`course` made a git clone whose one commit holds `paths`, as the course shipped them."""
    _git(course, "init", "-q")
    _git(course, "add", *paths)
    _git(course, "commit", "-qm", "le cours tel qu'il est livré")


def _make_from(c, folder: str, *args: str):
    """``make <args>`` run as the teacher runs it in the small class's course (the course's
    Makefiles copied there), from `folder` (« » the course's root, « grader »)."""
    from grading_course import make
    from helpers import REPO

    course = c["grader"].parent
    for part in ("Makefile", "grader/grader.mk", "grader/Makefile"):
        if not (course / part).exists():
            shutil.copy(REPO / part, course / part)
    return make(course, *args, folder=folder, timeout=300)


_ERASE_AS_USER = """
import site, sys
site.addsitedir(sys.argv[1])
sys.path.insert(0, sys.argv[2])
from grading.erase_learner import ErasureError, Setup, erase
from pathlib import Path
grader = Path(sys.argv[2])
setup = Setup(grader_dir=grader, roster=grader / "eleves.csv", exchange=Path(sys.argv[3]))
try:
    result = erase("ana", setup, confirm=True, control="cyr")
except ErasureError as exc:
    print("REFUS", exc)
else:
    print("ECHECS" if result.failures else "PREUVE FAITE", result.failures)
"""


def _erased_as_another_teacher(c, tag: str, cases: tuple[str, ...], prepare) -> dict[str, str]:
    """For each case, a copy of the small class owned by a real second Unix user (a teacher on
    a shared machine), `prepare(case, here, user)` run as root in it, then the erasure of ana
    run as that user with Debian's python3: what it says, by case."""
    import subprocess
    import sysconfig
    import tempfile

    from hub.classhub import unix_users

    if os.geteuid() != 0 or not shutil.which("runuser"):
        pytest.skip("crée un vrai utilisateur Unix\u00a0: il faut être root sous Linux")
    purelib = sysconfig.get_paths()["purelib"]
    user = f"prof{os.getpid() % 100000}{tag}"
    base = Path(tempfile.mkdtemp(prefix=f"{tag}-", dir="/tmp"))
    try:
        base.chmod(0o755)
        said = {}
        with unix_users([user]):
            for case in cases:
                here = base / case
                shutil.copytree(c["tmp"] / "cours", here / "cours", symlinks=True)
                shutil.copytree(c["exchange"], here / "echange", symlinks=True)
                grader = here / "cours" / "grader"
                subprocess.run(["chown", "-R", f"{user}:", str(here)], check=True)
                prepare(case, here, user)
                proc = subprocess.run(
                    ["runuser", "-u", user, "--", "/usr/bin/python3", "-c", _ERASE_AS_USER]
                    + [purelib, str(grader), str(here / "echange")],
                    capture_output=True,
                    text=True,
                    timeout=300,
                    cwd=grader,
                )
                said[case] = proc.stdout + proc.stderr
        return said
    finally:
        shutil.rmtree(base, ignore_errors=True)
