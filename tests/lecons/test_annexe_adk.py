"""The ADK appendix: real google-adk 2.10 for every learner, on the file lesson 2 wrote (or it
says which lesson makes it), and the learner's own ``oublier`` checked on a base written by ADK
instead of an erasure of its own."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from helpers import REPO
from helpers import network_free_env as kernel_env
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

from course.labo.criteria import CRITERIA
from course.sessions import SqliteSessionService

# the criteria table's count (course/labo/criteria.py), as the messages state it
N = len(CRITERIA)

APPENDIX = REPO / "solutions" / "lecons" / "08_annexe_adk.ipynb"
STUDENT_APPENDIX = REPO / "notebooks" / "lecons" / "08_annexe_adk.ipynb"
LESSON_2 = REPO / "solutions" / "lecons" / "02_brancher_sqlite.ipynb"
TP_SOLUTION = REPO / "solutions" / "oublier" / "oublier.ipynb"
TP_STUDENT = REPO / "notebooks" / "oublier" / "oublier.ipynb"
NBSP = "\u00a0"
GREETING_AT_4 = re.compile(r"Alice.*niveau 4")


def run(path: Path, workdir: Path, env: dict[str, str]) -> nbformat.NotebookNode:
    """Run a notebook top to bottom, stopping at the first error (as « Run all » does)."""
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, timeout=120, kernel_name="python3")
    client.execute(env=env, cwd=str(workdir))
    return nb


def printed(nb) -> dict[str, str]:
    return {
        c.id: "".join(o.get("text", "") for o in c.get("outputs", [])).replace(NBSP, " ")
        for c in nb.cells
        if c.cell_type == "code"
    }


def counts_line(text: str, who: str) -> tuple[int, ...]:
    m = re.search(
        rf"^{who} : (\d+) session\(s\), (\d+) événement\(s\), (\d+) ligne\(s\) dans user_states$",
        text,
        re.MULTILINE,
    )
    assert m, text
    return tuple(int(x) for x in m.groups())


def without_adk(base: dict[str, str], folder: Path) -> dict[str, str]:
    """A kernel environment where ``import google.adk`` fails, as in an incomplete install."""
    package = folder / "google" / "adk"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(
        'raise ImportError("google-adk absent (simulé par les tests)")\n'
    )
    env = dict(base)
    env["PYTHONPATH"] = os.pathsep.join([str(folder), env["PYTHONPATH"]])
    return env


def course_layout(tmp_path: Path, tp: Path | None) -> Path:
    """lecons/ for the appendix and, beside it, oublier/oublier.ipynb (a copy of `tp`)."""
    lecons = tmp_path / "lecons"
    lecons.mkdir()
    if tp is not None:
        (tmp_path / "oublier").mkdir()
        shutil.copy(tp, tmp_path / "oublier" / "oublier.ipynb")
    return lecons


def test_the_missing_package_is_simulated_faithfully(tmp_path: Path, network_free_env):
    env = without_adk(network_free_env, tmp_path / "sans_adk")
    probe = "import google.adk.sessions.sqlite_session_service"
    missing = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True)
    assert missing.returncode != 0 and "ImportError" in missing.stderr
    present = subprocess.run([sys.executable, "-c", probe], env=network_free_env)
    assert present.returncode == 0  # control: the same import works in the normal kernel


def test_adk_is_installed_with_the_course_and_nothing_is_skipped():
    """No « étape sautée », no install hint for a package that is not published."""
    import google.adk

    assert google.adk.__version__ == "2.10.0"
    for path in (APPENDIX, STUDENT_APPENDIX):
        text = path.read_text(encoding="utf-8")
        assert "sautée" not in text and "course-memoire-tuteur[adk]" not in text
        assert "pip install" not in text


def test_without_adk_the_first_cell_stops_with_what_to_do(tmp_path: Path, network_free_env):
    env = without_adk(network_free_env, tmp_path / "sans_adk")
    workdir = course_layout(tmp_path, None)
    nb = nbformat.read(STUDENT_APPENDIX, as_version=4)
    client = NotebookClient(nb, timeout=120, kernel_name="python3")
    with pytest.raises(CellExecutionError) as error:
        client.execute(env=env, cwd=str(workdir))
    assert f"google-adk 2.10 manque dans cet environnement{NBSP}:" in str(error.value)
    assert "make lab" in str(error.value)
    ran = [c.id for c in nb.cells if c.cell_type == "code" and c.get("outputs")]
    assert ran == ["l8-c02"], "nothing after the failed import runs, so nothing claims a result"


@pytest.fixture(scope="module")
def in_an_empty_folder(tmp_path_factory) -> dict[str, str]:
    """The appendix where no lesson ran before it and the TP is not there."""
    tmp = tmp_path_factory.mktemp("vide")
    return printed(run(APPENDIX, course_layout(tmp, None), kernel_env()))


@pytest.mark.slow
def test_in_an_empty_folder_it_says_which_lesson_makes_the_file(in_an_empty_folder):
    out = in_an_empty_folder["l8-c04"]
    assert "tuteur.db : absent de ce dossier." in out
    assert "lecon02.db : absent de ce dossier." in out
    assert "exécutez d'abord la leçon 2 (02_brancher_sqlite.ipynb), qui écrit lecon02.db" in out
    assert "pas de session d'" not in out.lower() and "sans session" not in out
    assert "Sessions d'Alice dans la copie : 2" in out  # the demo's two sittings
    assert (
        "Votre TP est introuvable : ../oublier/oublier.ipynb n'existe pas"
        in (in_an_empty_folder["l8-c16"])
    )
    assert "critères respectés" not in in_an_empty_folder["l8-c16"]


def test_the_appendix_shows_each_step_with_adk(in_an_empty_folder):
    out = in_an_empty_folder
    names = out["l8-c25"]
    assert "google-adk 2.10.0 est installé." in names and "Agent est LlmAgent : True" in names
    assert "run_async du Runner d'ADK : ['user_id', 'session_id', 'new_message']" in names
    assert "le message, pour ADK : google.genai.types.Content 'Bonjour'" in names
    assert "from google.adk.sessions import GetSessionConfig : ImportError" in names
    assert "GetSessionConfig vient de google.adk.sessions.base_session_service" in names
    listing = out["l8-c06"]
    assert listing.count("événements chargés : 0") == 2
    assert "2 événements relus par ADK" in listing and GREETING_AT_4.search(listing)
    missing = out["l8-c09"]
    for name in ("close", "__aenter__", "db_path", "list_events"):
        assert f"le service d'ADK a-t-il {name} ? non" in missing
    assert "_db_path = 'annexe_adk.db'" in missing
    assert re.search(r"créé par le cours  : mode wal .*-wal'\]", missing)  # control
    assert "créé par ADK       : mode delete ; pendant une lecture : ['annexe_adk_neuf.db']" in (
        missing
    )
    assert "index en plus des clés primaires : []" in missing
    survives = out["l8-c14"]
    assert counts_line(survives, "Alice") == (0, 0, 1)
    assert counts_line(survives, "Bob")[1] > 0  # the control, untouched
    assert GREETING_AT_4.search(survives)
    checkpoint = out["l8-c26"]
    assert "mode du journal : delete" in checkpoint
    assert "PRAGMA wal_checkpoint(TRUNCATE) : (0, -1, -1)" in checkpoint
    assert "à côté du fichier : ['annexe_adk_neuf.db']" in checkpoint
    other_way = out["l8-c19"]
    assert "le service du cours relit : 1 session de Bob" in other_way
    assert "mode du journal, ensuite : wal" in other_way and "ADK relit encore : 1" in other_way
    # Bob's surname was in the copy (the control) and no file of the appendix is left
    assert re.search(r"Où se lit « Lemercier » : \[.*'annexe_adk\.db'.*\]", other_way), other_way
    assert "Fichiers de l'annexe après le rangement : []" in other_way


def test_quiz_explanations_name_a_cell_that_ran(in_an_empty_folder):
    """« La cellule … le montre » only where that cell printed what the quiz says."""
    nb = nbformat.read(APPENDIX, as_version=4)
    quizzes = {c.id: c.source for c in nb.cells if "quiz" in c.metadata.get("tags", [])}
    assert "La cellule précédente" not in "".join(quizzes.values())
    assert "La cellule de la section 1 le montre" in quizzes["l8-c23"]
    assert "2 événements relus par ADK" in in_an_empty_folder["l8-c06"]
    assert "(0, -1, -1)" in quizzes["l8-c17"] and "(0, -1, -1)" in in_an_empty_folder["l8-c26"]


@pytest.mark.slow
def test_on_lesson_2s_file_it_checks_the_learners_own_oublier(tmp_path: Path, run_notebook):
    """Lesson 2 then the appendix in one folder, the TP (here its solution) beside: the appendix
    copies lecon02.db (left byte for byte as it was) and checks that oublier on ADK's base."""
    lecons = course_layout(tmp_path, TP_SOLUTION)
    run_notebook(LESSON_2, lecons)
    own = lecons / "lecon02.db"
    c = sqlite3.connect(own)
    alice = c.execute("SELECT count(*) FROM sessions WHERE user_id = 'alice'").fetchone()[0]
    c.close()
    beside = sorted(p.name for p in lecons.iterdir())
    before = hashlib.sha256(own.read_bytes()).hexdigest()
    notes = lecons / "annexe_adk_mes_notes.txt"  # the learner's, with a name like the annex's
    notes.write_text("à garder")
    out = printed(run(APPENDIX, lecons, kernel_env()))
    assert "annexe_adk.db : une copie de votre lecon02.db." in out["l8-c04"]
    assert f"Sessions d'Alice dans la copie : {alice}" in out["l8-c04"] and alice >= 3
    assert out["l8-c06"].count("événements chargés : 0") == alice
    checked = out["l8-c16"]
    assert f"{N}/{N} critères respectés sur la base d'exemple écrite par google-adk 2.10" in checked
    assert "Ce n'est pas une note" in checked and "DELETE" not in checked
    assert hashlib.sha256(own.read_bytes()).hexdigest() == before
    assert not [p.name for p in lecons.glob("lecon02.db*") if p.name not in beside]
    left = sorted(p.name for p in lecons.glob("annexe_adk*"))
    assert left == [notes.name], "the appendix removes the copies it made, and only them"
    assert notes.read_text() == "à garder"


@pytest.mark.slow
def test_an_unwritten_oublier_and_a_file_without_alice_are_named(tmp_path: Path):
    """The student's TP as released (the stub) and a TUTEUR_DB without alice: both said as
    they are, and the appendix goes on with the demo."""
    lecons = course_layout(tmp_path, TP_STUDENT)
    other = tmp_path / "bob_seul.db"

    async def only_bob() -> None:
        async with SqliteSessionService(other) as service:
            await service.create_session(app_name="tuteur", user_id="bob")

    asyncio.run(only_bob())
    out = printed(run(APPENDIX, lecons, dict(kernel_env(), TUTEUR_DB=str(other))))
    assert f"{other} : présent, sans session d'Alice." in out["l8-c04"]
    assert "lecon02.db : absent de ce dossier." in out["l8-c04"]
    assert "annexe_adk.db : les deux séances de démonstration d'Alice" in out["l8-c04"]
    assert (
        "Votre fonction oublier n'est pas encore écrite dans ../oublier/oublier.ipynb"
        in out["l8-c16"]
    )
    assert "critères respectés" not in out["l8-c16"]


def tp_answer(path: Path = TP_SOLUTION) -> str:
    return next(c.source for c in nbformat.read(path, as_version=4).cells if c.id == "oublier")


@pytest.mark.slow
def test_the_adk_check_fails_an_oublier_that_leaves_bytes(capsys):
    """Without VACUUM, ADK's rollback-journal file keeps alice's text in its free pages."""
    from course.labo import verifier

    answer = tp_answer()
    assert 'conn.execute("VACUUM")' in answer
    verifier(answer.replace('conn.execute("VACUUM")', "pass"), avec_adk=True)
    out = capsys.readouterr().out.replace(NBSP, " ")
    assert "✘ 7. Plus rien de l'élève n'est lisible" in out
    assert f"{N - 1}/{N} critères respectés sur la base d'exemple écrite par google-adk 2.10" in out


def test_the_adk_base_is_written_by_adk_with_the_same_learners():
    from course.labo.fixture import fixture_bytes
    from course.labo.snapshot_checker import read_tables

    adk, _ = fixture_bytes(backend="adk")
    course, _ = fixture_bytes()
    assert adk[18:20] == b"\x01\x01" and course[18:20] == b"\x02\x02"  # rollback vs WAL

    def summary(image: bytes) -> dict:
        rows, _columns, problem, _schema = read_tables(image)
        assert problem is None
        out: dict = {}
        for app, user, _id, state, *_ in rows["sessions"]:  # ids are random: states sorted
            out.setdefault(("sessions", app, user), []).append(json.dumps(json.loads(state)))
            out[("sessions", app, user)].sort()
        for app, user, state, _t in rows["user_states"]:
            out[("user_states", app, user)] = json.loads(state)
        for event in rows["events"]:
            out[("events", event[1], event[2])] = out.get(("events", event[1], event[2]), 0) + 1
        return out

    assert summary(adk) == summary(course)
    conn = sqlite3.connect(":memory:")
    conn.deserialize(bytes(bytearray(adk)))
    extra = "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL"
    assert conn.execute(extra).fetchone()[0] == 0  # no index of the course's
    conn.close()


@pytest.mark.slow
def test_oublier_gets_adks_own_service_with_the_path_it_keeps():
    from course.labo.evaluate import evaluate_source
    from course.labo.scenario import Role

    probe = (
        "async def oublier(service, user_id):\n"
        "    raise RuntimeError(type(service).__module__ + ' ' + str(service.db_path))\n"
    )
    for backend, module in (
        ("adk", "google.adk.sessions.sqlite_session_service"),
        ("course", "course.sessions.sqlite_session_service"),  # control
    ):
        evaluation = evaluate_source(probe, backend=backend)
        (result,) = evaluation.results.values()
        error = result.first(Role.ERASE).outcome.error
        assert error.message.startswith(module + " "), error
        assert error.message.endswith(".db")
