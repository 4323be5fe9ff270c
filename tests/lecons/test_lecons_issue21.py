"""Issue 21, the lessons' side: each lesson says which names are the course's and which a
learner imports from ADK, lessons lead to the TP (not to an answer), retention is a time rule,
no lesson leaves personal data behind, and the smaller facts and words the issue lists."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest
from helpers import REPO
from notebook_text import NBSP, markdown, tags, text_of
from parcours import GLOSSARY, PARCOURS, START

from course.labo.evaluate import extract_source
from course.sessions._schema import INDEX_NAMES

SOLUTIONS = REPO / "solutions" / "lecons"
TP = REPO / "solutions" / "oublier" / "oublier.ipynb"
LESSONS = PARCOURS.lessons  # before the TP (parcours.py reads them from the start page)
APPENDIX = "08_annexe_adk.ipynb"  # for its own claims (cells l8-…)
BOX = "> **Du cours ou d'ADK\u00a0?**"
# a course name -> the import a learner writes with google-adk 2.10 instead (None: the course's own)
ADK_IMPORT = {
    "Runner": "from google.adk.runners import Runner",
    "Tuteur": "from google.adk.agents import LlmAgent",
    "message": "from google.genai.types import Content, Part",
    "SqliteSessionService": (
        "from google.adk.sessions.sqlite_session_service import SqliteSessionService"
    ),
    "InMemorySessionService": "from google.adk.sessions import InMemorySessionService",
    "GetSessionConfig": "from google.adk.sessions.base_session_service import GetSessionConfig",
    "Event": "from google.adk.events import Event, EventActions",
    "EventActions": "from google.adk.events import Event, EventActions",
    "Content": "from google.genai.types import Content, Part",
    "Part": "from google.genai.types import Content, Part",
    "APP_NAME": None,
    "demo": None,
}
WORDS = {2: "deux", 3: "trois", 4: "quatre"}
# what the lessons make learners say about themselves: no file a lesson leaves may hold it
PERSONAL_DATA = ("Lemercier",)


def read(name: str | Path) -> nbformat.NotebookNode:
    return nbformat.read(SOLUTIONS / name if isinstance(name, str) else name, as_version=4)


def prose(source: str) -> str:
    """Markdown without code fences, code spans and link targets, one kind of space."""
    source = re.sub(r"```.*?```", " ", source, flags=re.S)
    source = re.sub(r"`[^`\n]*`", " ", source)
    source = re.sub(r"\]\([^)]*\)", "]", source)
    return source.replace(NBSP, " ")


# ------------------------------------------------------------------ the course's names and ADK's


def course_imports(nb) -> list[str]:
    code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    found = re.findall(r"^from course\.(?:tuteur|sessions|events) import (.+)$", code, re.M)
    return [name.strip() for line in found for name in line.split(",")]


@pytest.mark.parametrize("name", LESSONS)
def test_each_lesson_says_which_names_are_the_courses_and_what_adk_imports_instead(name):
    nb = read(name)
    boxes = [c for c in nb.cells if c.cell_type == "markdown" and c.source.startswith(BOX)]
    assert len(boxes) == 1, f"{name}: one « Du cours ou d'ADK ? » box"
    assert nb.cells.index(boxes[0]) == 2, "right after the imports"
    box = boxes[0].source.replace(NBSP, " ")
    names = course_imports(nb)
    assert names, name
    for course_name in names:
        assert course_name in ADK_IMPORT, f"{name}: say what {course_name} is"
        assert f"`{course_name}`" in box, f"{name}: the box names {course_name}"
        if ADK_IMPORT[course_name]:
            assert f"> {ADK_IMPORT[course_name]}" in box, (name, course_name)
    own = [n for n in names if ADK_IMPORT[n] is None or n in {"Tuteur", "message"}]
    assert re.search(r"sont propres au cours|est propre au cours", box)
    assert all(f"`{n}`" in box.split("propre")[0] for n in own), "the course's own, named first"


def test_the_adk_imports_the_boxes_give_work_with_adk_2_10():
    pytest.importorskip("google.adk")
    lines = set()
    for name in LESSONS:
        box = next(c.source for c in read(name).cells if c.source.startswith(BOX))
        lines |= {ln[2:].split("  #")[0] for ln in box.splitlines() if ln.startswith("> from ")}
    assert "from google.adk.runners import Runner" in lines and len(lines) >= 6
    for line in sorted(lines):
        exec(line, {})  # noqa: S102 - the course's own lines, checked against the real ADK


# ------------------------------------------------------------------ lessons lead to the TP


@pytest.mark.parametrize("name", LESSONS)
def test_lessons_lead_to_the_tp_not_to_the_annex(name):
    text = "\n".join(c.source for c in read(name).cells)
    for appendix in PARCOURS.appendices:
        assert appendix not in text, f"{name} links to the annex before the TP"
    assert "fait le même effacement" not in text


@pytest.mark.parametrize("name", [START, *LESSONS])
def test_no_lesson_code_deletes_what_only_the_tp_erases(name):
    """Lessons measure (sessions deleted in copies); the user_states DELETE is the TP's."""
    for cell in read(name).cells:
        if cell.cell_type != "code":
            continue
        deleted = set(re.findall(r"DELETE FROM (\w+)", cell.source))
        assert deleted <= {"sessions"}, (name, cell.id, deleted)


# ------------------------------------------------------------------ retention, personal data


def test_retention_is_a_time_rule_with_user_states_justified():
    nb = read(LESSONS[4])
    section = markdown(nb).split("## Une durée de conservation", 1)[1].split("\n## ", 1)[0]
    assert "depuis 30 jours" in section and "dernière" in section and "last_update_time" in section
    assert "user_states" in section and "oublier" in section  # kept, and why, and until when
    code = "\n".join(c.source for c in nb.cells)
    assert "garder_les_dernieres" not in code and "sessions[:-k]" not in code
    solution = next(c.source for c in nb.cells if "def supprimer_inactives" in c.source)
    assert "last_update_time" in solution and "86400" in solution


# wrong answers the retention check must refuse, each with what it says
WRONG_RETENTIONS = {
    # the old exercise's « keep the 2 latest »: a count, not a time
    "count": (
        "async def supprimer_inactives(service, jours):\n"
        "    if jours < 0:\n"
        "        raise ValueError(jours)\n"
        "    reponse = await service.list_sessions(app_name=APP_NAME, user_id='chloe')\n"
        "    sessions = reponse.sessions\n"
        "    for s in sessions[:-2]:\n"
        "        await service.delete_session(app_name=APP_NAME, user_id='chloe', "
        "session_id=s.id)\n"
        "    return len(sessions[:-2])\n",
        "s2 et s3 (Chloé) et la session de Dan",
    ),
    # learner's walk, stop 58: a raw DELETE without the cascade passed, its events left behind
    "orphans": (
        "async def supprimer_inactives(service, jours):\n"
        "    import time\n"
        "    if jours < 0:\n"
        "        raise ValueError(jours)\n"
        "    c = sqlite3.connect(service.db_path)\n"
        "    try:\n"
        "        n = c.execute('DELETE FROM sessions WHERE app_name = ? AND update_time < ?',\n"
        "                      (APP_NAME, time.time() - jours * 86400)).rowcount\n"
        "        c.commit()\n"
        "    finally:\n"
        "        c.close()\n"
        "    return n\n",
        "reste(nt) dans events",
    ),
    # second learner's walk, stop 58: a raw DELETE with the cascade, but of every application
    "other_apps": (
        "async def supprimer_inactives(service, jours):\n"
        "    import time\n"
        "    if jours < 0:\n"
        "        raise ValueError(jours)\n"
        "    c = sqlite3.connect(service.db_path)\n"
        "    c.execute('PRAGMA foreign_keys = ON')\n"
        "    with c:\n"
        "        n = c.execute('DELETE FROM sessions WHERE update_time < ?',\n"
        "                      (time.time() - jours * 86400,)).rowcount\n"
        "    c.close()\n"
        "    return n\n",
        "dans une autre application (agenda) reste",
    ),
    # learner's walk, stop 59: jours checked after the loop, -1 deleted everything then raised
    "late_check": (
        "async def supprimer_inactives(service, jours):\n"
        "    import time\n"
        "    limite = time.time() - jours * 86400\n"
        "    r = await service.list_sessions(app_name=APP_NAME)\n"
        "    vieilles = [s for s in r.sessions if s.last_update_time < limite]\n"
        "    for s in vieilles:\n"
        "        await service.delete_session(app_name=APP_NAME, user_id=s.user_id, "
        "session_id=s.id)\n"
        "    if jours < 0:\n"
        "        raise ValueError(jours)\n"
        "    return len(vieilles)\n",
        "ValueError, mais après avoir supprimé des sessions",
    ),
    # and one that forgets every learner but Chloé
    "chloe_only": (
        "async def supprimer_inactives(service, jours):\n"
        "    import time\n"
        "    if jours < 0:\n"
        "        raise ValueError(jours)\n"
        "    limite = time.time() - jours * 86400\n"
        "    r = await service.list_sessions(app_name=APP_NAME, user_id='chloe')\n"
        "    vieilles = [s for s in r.sessions if s.last_update_time < limite]\n"
        "    for s in vieilles:\n"
        "        await service.delete_session(app_name=APP_NAME, user_id='chloe', "
        "session_id=s.id)\n"
        "    return len(vieilles)\n",
        "s2 et s3 (Chloé) et la session de Dan",
    ),
}


@pytest.mark.slow
def test_the_retention_check_rejects_wrong_rules(tmp_path: Path, run_notebook):
    """Controls: a « keep the 2 latest » rule, a raw DELETE that leaves the sessions' events
    (learner's walk, stop 58: it passed), and a rule for Chloé only fail the check, each told
    why; the right answer, run last in the same kernel, passes."""
    nb = read(LESSONS[4])
    by_id = {c.id: c for c in nb.cells}
    cells = [by_id["l5-c02"].source]
    for answer, _said in WRONG_RETENTIONS.values():
        cells += [answer, by_id["l5-c29"].source]
    cells += [by_id["l5-c28"].source, by_id["l5-c29"].source]
    path = tmp_path / "conservation.ipynb"
    nbformat.write(
        nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells]), path
    )
    ran, _ = run_notebook(path, tmp_path, allow_errors=True)
    checks = ran.cells[2::2]
    for check, (name, (_answer, said)) in zip(checks, WRONG_RETENTIONS.items(), strict=False):
        errors = [o for o in check.outputs if o.output_type == "error"]
        assert errors and errors[0].ename == "ExerciceNonReussi", f"{name} passed the check"
        assert said in errors[0].evalue, (name, errors[0].evalue)
    assert not [o for o in checks[-1].outputs if o.output_type == "error"], checks[-1].outputs
    assert "Bravo" in "".join(o.get("text", "") for o in checks[-1].outputs)


@pytest.mark.parametrize(
    "names",
    [
        pytest.param([START, *LESSONS, GLOSSARY], id="lessons"),
        pytest.param(PARCOURS.appendices, id="annex"),
        pytest.param(PARCOURS.after_tp, id="shared"),
    ],
)
@pytest.mark.slow
def test_no_lesson_leaves_personal_data_in_the_files_it_makes(executed_lessons, names):
    for marker in PERSONAL_DATA:
        assert any(marker in "\n".join(c.source for c in read(n).cells) for n in LESSONS)
    left = {}
    for name in names:
        _nb, _seconds, workdir = executed_lessons[name]
        for path in Path(workdir).rglob("*"):
            if path.is_file():
                data = path.read_bytes()
                found = [m for m in PERSONAL_DATA if m.encode() in data]
                if found:
                    left[f"{name}: {path.name}"] = found
    assert left == {}
    # control: the same search found the surname in lesson 4's files before it removed them
    tidy = text_of(executed_lessons[LESSONS[3]][0], "l4-c22")
    assert re.search(r"Où se lit « Lemercier » : \[.*'lecon04\.db'.*\]", tidy), tidy
    assert "Fichiers de la leçon après le rangement : []" in tidy
    # and the annex's search found it in its copy before it removed its files
    tidy = text_of(executed_lessons[APPENDIX][0], "l8-c19")
    assert re.search(r"Où se lit « Lemercier » : \[.*'annexe_adk\.db'.*\]", tidy), tidy
    assert "Fichiers de l'annexe après le rangement : []" in tidy


# ------------------------------------------------------------------ smaller facts


def test_lesson_1_counts_the_courses_indexes_and_names_synchronous():
    md = markdown(read(LESSONS[0]))
    assert f"{WORDS[len(INDEX_NAMES)]} index de plus" in md and "deux index" not in md
    glossary = markdown(read("glossaire.ipynb"))
    assert f"en ajoute {WORDS[len(INDEX_NAMES)]}." in glossary
    service = (REPO / "course" / "sessions" / "sqlite_session_service.py").read_text()
    assert 'PRAGMA synchronous = NORMAL"' in service
    assert "| `PRAGMA synchronous = NORMAL` |" in md
    assert "tout écrit sur le disque" not in "\n".join(c.source for c in read(LESSONS[4]).cells)


def test_lesson_0_says_the_kernel_runs_the_event_loop():
    md = markdown(read(START))
    assert "JupyterLab fait déjà tourner" not in md and "le noyau Python du notebook" in md


def test_lesson_5_says_close_checkpoints_only_as_the_last_connection():
    md = markdown(read(LESSONS[4]))
    assert "dernière** connexion" in md and "`close()` fait le checkpoint et supprime" not in md


# ------------------------------------------------------------------ the TP's statement


def tp_markdown() -> str:
    return markdown(nbformat.read(TP, as_version=4))


def test_the_tp_says_what_criterion_7_searches_and_what_the_grader_keeps():
    md = tp_markdown()
    assert "**Ce que cherche le critère 7.**" in md and "`agenda`" in md
    assert "ne sont pas exécutées par le\n  correcteur" not in md
    assert "leçon 4 (« Effacer un élève : les faits »)" in md
    assert "`service` vous est donné **ouvert**" in md and "Ne le fermez pas" in md
    # what the statement says is kept is what the grader keeps
    cell = "import os\nLIMITE = 30\nasync def oublier(s, u):\n    pass\nclass A:\n    pass\n"
    extra = "await oublier(None, 'alice')\nprint('x')\nfor i in range(3):\n    pass\nA.x = 1\n"
    kept = extract_source(cell + extra)
    assert kept.split() == extract_source(cell).split() and "LIMITE = 30" in kept
    assert "print" not in kept and "await" not in kept and "for " not in kept


def test_the_written_procedure_and_its_rubric_ask_for_backups_and_a_control():
    nb = nbformat.read(TP, as_version=4)
    cells = {c.id: c.source.replace(NBSP, " ") for c in nb.cells}
    for cell_id in ("documenter-md", "documentation"):
        assert "sauvegardes" in cells[cell_id] and "témoin" in cells[cell_id], cell_id


# ------------------------------------------------------------------ French


FAMILIAR = ("fait pareil", "c'est pareil", "Ça ne sert à rien", "journal d'annulation")


@pytest.mark.parametrize("name", [START, *LESSONS, GLOSSARY, *PARCOURS.after_tp])
def test_one_register_one_term_and_names_with_a_capital(name):
    nb = read(name)
    every = "\n".join(c.source for c in nb.cells).replace(NBSP, " ")
    for phrase in FAMILIAR:
        assert phrase.lower() not in every.lower(), (name, phrase)
    assert "est dans le `-wal`, ni dans" not in every
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            text = prose(cell.source)
        elif "quiz" in tags(cell):  # the question, options and explanations are prose
            text = " ".join(re.findall(r'"((?:[^"\\]|\\.)*)"', cell.source))
            text = re.sub(r"'[^']*'", " ", text)  # SQL literals such as user_id = 'bob'
        else:
            continue
        lower = re.findall(r"(?<![\w'\"=/.-])(alice|bob|chloé|chloe)(?![\w'\".@-])", text)
        assert lower == [], (name, cell.id, lower)


@pytest.mark.slow
def test_the_control_finds_a_lower_case_name_in_prose():
    text = prose("alice va écrire ; le `user_id` vaut `alice`.")
    assert re.findall(r"(?<![\w'\"=/.-])(alice|bob)(?![\w'\".@-])", text) == ["alice"]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("lesson", "exercise"),
    [(1, "derniere_session_complete"), (4, "messages_de_l_eleve")],
)
def test_a_check_run_again_after_the_whole_lesson_passes_as_its_message_says(
    tmp_path: Path, run_notebook, lesson, exercise
):
    """Second learner's walk, stop 58: the whole lesson run, then its exercise's check again:
    « connexion fermée » told to reopen the connection alone, and the check then refused her
    right answer on a base the later cells had changed (lesson 2: 4 events for 2; lesson 5:
    SessionNotFoundError). Done as the message now says, everything above it then the check,
    in the same kernel, the right answer passes."""
    nb = read(LESSONS[lesson])
    sources = [c.source for c in nb.cells if c.cell_type == "code"]
    check = next(i for i, s in enumerate(sources) if f'verification("{exercise}")' in s)
    cells = sources + ["from course.exercices import verification"] + sources[: check + 1]
    path = tmp_path / "encore.ipynb"
    nbformat.write(
        nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells]), path
    )
    ran, _ = run_notebook(path, tmp_path, allow_errors=True)
    last = ran.cells[-1]
    errors = [(o.ename, o.evalue) for o in last.outputs if o.output_type == "error"]
    assert not errors, errors
    assert "Bravo" in "".join(o.get("text", "") for o in last.outputs)


# learner's walk, stop 59: an answer the check refused, or one it passed, wrongly
CHECK_CASES = {
    # the tutor answered in the new session first: 4 events, not the 2 the check counted
    "right_after_a_talk": (
        1,
        "derniere_session_complete",
        'await dire("alice", nouvelle.id, "@")',
        "Bravo",
    ),
    # the whole session read at once: right messages, no page
    "no_pages": (
        4,
        "messages_de_l_eleve",
        "async def messages_de_l_eleve(service, user_id, session_id, taille=4):\n"
        "    session = await service.get_session(app_name=APP_NAME, user_id=user_id,\n"
        "                                        session_id=session_id)\n"
        "    return [p.text for e in session.events if e.author == 'user' and e.content\n"
        "            for p in e.content.parts if p.text]\n",
        "pas lus par pages",
    ),
}


@pytest.mark.slow
@pytest.mark.parametrize("case", CHECK_CASES)
def test_an_exercise_check_judges_what_it_asks(tmp_path: Path, run_notebook, case):
    """The lesson up to its exercise's answer, then `extra` and the check: a right answer
    passes whatever the learner did before, a wrong one is refused with its reason."""
    lesson, exercise, extra, said = CHECK_CASES[case]
    sources = [c.source for c in read(LESSONS[lesson]).cells if c.cell_type == "code"]
    check = next(i for i, s in enumerate(sources) if f'verification("{exercise}")' in s)
    cells = [*sources[:check], extra, sources[check]]
    path = tmp_path / "exercice.ipynb"
    nbformat.write(
        nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells]), path
    )
    ran, _ = run_notebook(path, tmp_path, allow_errors=True)
    last = ran.cells[-1]
    shown = "".join(o.get("text", "") + o.get("evalue", "") for o in last.outputs)
    assert said in shown, shown


# third learner's walk, stop 59: wrong queries each told what is wrong, not always « -> »
WRONG_LEVEL_QUERIES = {
    "user_id": (
        "def requete_niveau():\n"
        "    return ('SELECT user_id, json_extract(state, \"$.progression.python.niveau\") '\n"
        "            'FROM user_states WHERE app_name = ? AND user_id = ?')\n",
        "le niveau doit venir en premier dans le SELECT",
    ),
    "state": (
        "def requete_niveau():\n"
        "    return 'SELECT state FROM user_states WHERE app_name = ? AND user_id = ?'\n",
        "tout le texte JSON de state",
    ),
    "arrow": (
        "def requete_niveau():\n"
        "    return (\"SELECT state -> '$.progression.python.niveau' FROM user_states \"\n"
        "            'WHERE app_name = ? AND user_id = ?')\n",
        "-> renvoie du JSON",
    ),
}


@pytest.mark.slow
def test_the_level_query_check_says_what_each_wrong_query_does(tmp_path: Path, run_notebook):
    """Each wrong query, then the check, in lesson 3 run up to its exercise: refused with its
    own reason; the right answer, run last in the same kernel, passes."""
    sources = [c.source for c in read(LESSONS[2]).cells if c.cell_type == "code"]
    check = next(i for i, s in enumerate(sources) if 'verification("requete_niveau")' in s)
    cells = sources[:check]
    for answer, _said in WRONG_LEVEL_QUERIES.values():
        cells += [answer, sources[check]]
    cells += [sources[check - 1], sources[check]]
    path = tmp_path / "niveau.ipynb"
    nbformat.write(
        nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells]), path
    )
    ran, _ = run_notebook(path, tmp_path, allow_errors=True)
    checks = ran.cells[check + 1 :: 2]
    for out, (name, (_answer, said)) in zip(checks, WRONG_LEVEL_QUERIES.items(), strict=False):
        errors = [o for o in out.outputs if o.output_type == "error"]
        assert errors and errors[0].ename == "ExerciceNonReussi", f"{name} passed the check"
        assert said in errors[0].evalue, (name, errors[0].evalue)
    assert "Bravo" in "".join(o.get("text", "") for o in checks[-1].outputs)
