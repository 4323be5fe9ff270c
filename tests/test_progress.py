"""The course remembers the learner (course/progress.py): a progress file of their own, written by
the course's SqliteSessionService, that survives a kernel restart, that the start page reads,
that the learner erases with their own ``oublier`` (a control learner kept), and that a lesson's
restart clears for that lesson only."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest
from helpers import REPO, network_free_env
from jupyter_client.manager import start_new_kernel
from nbclient import NotebookClient

from course import progress
from course.progress import (
    LESSONS,
    forget_progress,
    mon_parcours,
    oublier_ma_progression,
    recommencer,
    record,
)

SOLUTIONS = REPO / "solutions" / "lecons"
SUBMISSIONS = REPO / "grader" / "submissions"


def _as(monkeypatch, user: str) -> None:
    monkeypatch.setenv(progress.USER_ENV_VAR, user)
    progress.reset_cache()


def _rows(path: Path, user: str) -> dict[str, int]:
    conn = sqlite3.connect(path)
    try:
        return {
            table: conn.execute(
                f"SELECT COUNT(*) FROM {table} WHERE app_name = 'cours' AND user_id = ?", (user,)
            ).fetchone()[0]
            for table in ("sessions", "events", "user_states")
        }
    finally:
        conn.close()


# -- a real kernel, restarted ------------------------------------------------------------------


def _run(kc, code: str) -> str:
    """Execute `code` in the kernel; its printed text and results, or the error raised."""
    out: list[str] = []

    def hook(msg) -> None:
        kind, content = msg["msg_type"], msg["content"]
        if kind == "stream":
            out.append(content["text"])
        elif kind in ("execute_result", "display_data"):
            out.append(content["data"].get("text/plain", ""))
        elif kind == "error":
            out.append("ERREUR " + content["ename"] + ": " + content["evalue"])

    reply = kc.execute_interactive(code, output_hook=hook, timeout=60)
    text = "".join(out)
    assert reply["content"]["status"] == "ok", text
    return text


def _start_page_cells() -> list[str]:
    """The start page's import cell and its two quiz cells, as the lesson has them."""
    nb = nbformat.read(SOLUTIONS / "00_commencer_ici.ipynb", as_version=4)
    by_id = {c.id: c.source for c in nb.cells}
    return [by_id["l0-c02"], by_id["l0-c06"], by_id["l0-c11"]]


@pytest.mark.slow
@pytest.mark.parametrize("restarted_as", ["alice", "bob"])
def test_a_bilan_survives_a_kernel_restart(tmp_path, restarted_as):
    """Alice answers a quiz of the start page, the kernel restarts, the same cells run again: the
    bilan still counts her answer. Bob, in the same file after the restart, starts from zero (the
    control: what comes back is Alice's own record, not something the kernel kept)."""
    env = dict(network_free_env(), COURS_PROGRES_DB=str(tmp_path / "progres.db"))
    env[progress.USER_ENV_VAR] = "alice"
    km, kc = start_new_kernel(kernel_name="python3", env=env, cwd=str(tmp_path))
    try:
        for source in _start_page_cells():
            _run(kc, source)
        first = _run(
            kc,
            "from course.quiz import notebook_quizzes\n"
            "q = notebook_quizzes()[0]\n"
            "q.repondre(q.indice_juste)\n"
            "print(bilan().texte())",
        )
        assert "Bilan\u00a0: 1 bonne réponse du premier coup sur 2 (1 question répondue)" in first
        env[progress.USER_ENV_VAR] = restarted_as
        km.restart_kernel(now=True, env=env)
        kc.wait_for_ready(timeout=60)
        assert _run(kc, "print('q' in globals())") == "False\n"  # a new kernel
        for source in _start_page_cells():
            _run(kc, source)
        again = _run(kc, "from course.quiz import bilan\nprint(bilan().texte())")
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    if restarted_as == "alice":
        assert "Bilan\u00a0: 1 bonne réponse du premier coup sur 2 (1 question répondue)" in again
    else:
        assert "Bilan\u00a0: 0 bonne réponse du premier coup sur 2 (0 question répondue)" in again


# -- the start page ----------------------------------------------------------------------------


def test_the_start_page_shows_the_path_done_and_what_is_next(monkeypatch, progress_file):
    _as(monkeypatch, "alice")
    empty = repr(mon_parcours())
    assert "rien encore\u00a0: commencez par la leçon 1." in empty
    record("01", "quiz", quiz="l1-a", option=0, juste=True)
    record("01", "bilan", total=1)
    record("02", "quiz", quiz="l2-a", option=1, juste=False)
    record("02", "indice", echelle="derniere_session_complete", niveau=1)
    view = mon_parcours()
    lines = repr(view).splitlines()
    assert lines[0] == f"Votre parcours (alice, enregistré dans {progress_file})\u00a0:"
    assert (
        "  ✔ 1. Choisir un service de session\u00a0: fait — quiz répondus\u00a0: 1/1, justes du "
        "premier coup\u00a0: 1"
    ) in lines
    assert (
        "  … 2. Brancher SQLite dans le Runner\u00a0: commencé — quiz répondus\u00a0: 1, justes du "
        "premier coup\u00a0: 0\u00a0; exercices réussis\u00a0: 0/1\u00a0; 1 indice demandé"
    ) in lines
    following = "Ensuite\u00a0: 2. Brancher SQLite dans le Runner (02_brancher_sqlite.ipynb)."
    assert lines[-1] == following
    assert "<li>✔ 1. Choisir un service de session" in view._repr_html_()
    # the file is the learner's: not readable by others
    assert progress_file.stat().st_mode & 0o077 == 0
    assert progress_file.parent.stat().st_mode & 0o077 == 0


def test_the_start_page_shows_it_and_the_annex_invites_to_forget_without_doing_it():
    """The start page's cell shows the path; the annex's cell offers the learner's own oublier,
    commented out, so that running every cell never erases the progress by itself."""
    start = nbformat.read(SOLUTIONS / "00_commencer_ici.ipynb", as_version=4)
    assert any(
        c.cell_type == "code" and c.source.rstrip().endswith("mon_parcours()") for c in start.cells
    )
    annex = nbformat.read(SOLUTIONS / "08_annexe_adk.ipynb", as_version=4)
    invitation = [
        c for c in annex.cells if "oublier_ma_progression" in c.source and (c.cell_type == "code")
    ]
    assert len(invitation) == 1
    assert invitation[0].source.splitlines()[-1] == "# await oublier_ma_progression()"


def test_the_course_lists_the_steps_of_the_start_page():
    """course.progress.LESSONS and the start page's table « Le parcours » name the same steps."""
    sys.path.insert(0, str(Path(__file__).parent / "lecons"))
    from parcours import PARCOURS

    table = [(s.label, s.notebook) for s in PARCOURS.steps]
    assert [(lesson.label, lesson.notebook) for lesson in LESSONS if lesson.key != "00"] == table


def test_an_exercise_passed_counts_once_and_finishes_its_lesson(monkeypatch):
    _as(monkeypatch, "alice")
    record("03", "bilan", total=0)
    progress.exercice_reussi("requete_niveau")
    progress.exercice_reussi("requete_niveau")
    progress.reset_cache()
    events = [m for s, m in progress._events() if s == "03" and m["type"] == "exercice"]
    assert events == [{"type": "exercice", "exercice": "requete_niveau"}]
    assert "✔ 3. Ce que contient le fichier\u00a0: fait" in repr(mon_parcours())
    with pytest.raises(ValueError, match="Exercice inconnu"):
        progress.exercice_reussi("inexistant")


def test_each_lessons_quiz_count_is_its_notebooks():
    """Each step's `quizzes`, which a score run in a kernel with some quiz cells not run counts
    from, is its notebook's own number of quiz cells."""
    for lesson in progress.LESSONS:
        path = SOLUTIONS / lesson.notebook
        cells = nbformat.read(path, as_version=4).cells if path.exists() else []
        counted = sum("quiz" in c.metadata.get("tags", []) for c in cells)
        assert (lesson.key, lesson.quizzes) == (lesson.key, counted)
        assert progress.quiz_count(lesson.key) == counted
    assert progress.quiz_count("inconnue") == 0


def test_a_score_run_after_a_restart_counts_the_quizzes_not_run_again(monkeypatch, tmp_path):
    """Learner's walk, stop 59: four of lesson 1's quizzes answered (two wrong first), the
    kernel restarted, two quiz cells run again and answered right, then the score: « 2 bonnes
    réponses du premier coup sur 2 … Tout est juste du premier coup », and the start page's
    total for lesson 1 became 2. The score counts the notebook's six quizzes."""
    from course import quiz as q

    monkeypatch.setenv("COURS_PROGRES_DB", str(tmp_path / "progres.db"))
    progress.reset_cache()
    q.reset()
    try:
        for ident in ("l1-a", "l1-b"):
            quiz = q.Quiz(
                "Q ?", [q.Option("a", True, "oui"), q.Option("b", False, "non")], ident=ident
            )
            quiz.repondre(quiz.indice_juste)
        score = q.bilan()
        text = score.texte()
        assert "du premier coup sur 6 (2 questions répondues)" in text, text
        assert "Pas encore exécutés dans ce noyau\u00a0: 4 quiz de ce notebook" in text, text
        assert "Tout est juste" not in text, text
        assert progress.quiz_total("01") == 6
    finally:
        q.reset()
        progress.reset_cache()


@pytest.mark.slow
def test_a_read_only_home_gives_one_french_warning_and_the_lesson_goes_on(tmp_path):
    """A home that cannot be written (bound read-only, so that even root cannot): the quizzes
    answer, the bilan counts, one warning in French (the reason in French, what to do), and the
    start page never says « enregistré dans » it; the same run in a writable home records."""
    home = tmp_path / "maison"
    home.mkdir()
    code = (
        "from course.quiz import Quiz, Option, bilan\n"
        "q = Quiz('Q ?', [Option('a', True, 'oui'), Option('b', False, 'non')], ident='l1-q')\n"
        "q.repondre(1); q.repondre(0)\n"
        "print(bilan().texte())\n"
        "from course.progress import mon_parcours\n"
        "print(mon_parcours())\n"
    )
    env = dict(os.environ, HOME=str(home))
    env[progress.USER_ENV_VAR] = "alice"
    env.pop("COURS_PROGRES_DB", None)
    python = [sys.executable, "-c", code]
    read_only = subprocess.run(
        ["bwrap", "--dev-bind", "/", "/", "--ro-bind", str(home), str(home), *python],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert read_only.returncode == 0, read_only.stderr
    # lesson 1's quiz: its five others, not run here, are counted (its Lesson's quizzes)
    assert "Bilan\u00a0: 0 bonne réponse du premier coup sur 6 (1 question répondue)" in (
        read_only.stdout
    )
    assert read_only.stderr.count("Attention\u00a0: votre progression n'est pas enregistrée") == 1
    assert "Traceback" not in read_only.stderr
    assert "Errno" not in read_only.stderr and "Read-only" not in read_only.stderr
    assert "système de fichiers en lecture seule" in read_only.stderr, read_only.stderr
    assert "donnez dans COURS_PROGRES_DB le chemin d'un fichier" in read_only.stderr
    saved = f"enregistré dans {home / '.cours-memoire-tuteur' / 'progres.db'}"
    assert saved not in read_only.stdout, read_only.stdout
    assert "Votre parcours (alice) n'est pas enregistré\u00a0: " in read_only.stdout
    assert (  # this kernel's answer
        "1. Choisir un service de session\u00a0: commencé — quiz répondus\u00a0: 1/6"
        in read_only.stdout
    ), read_only.stdout
    assert not (home / ".cours-memoire-tuteur").exists()
    writable = subprocess.run(python, env=env, capture_output=True, text=True, timeout=60)
    assert writable.returncode == 0 and writable.stderr == ""
    assert f"Votre parcours (alice, {saved})" in writable.stdout  # the control
    recorded = _rows(home / ".cours-memoire-tuteur" / "progres.db", "alice")
    assert recorded["events"] == 3  # two answers and the bilan


@pytest.mark.slow
def test_a_progress_file_given_in_the_kernel_after_a_failure_is_not_said_unusable(tmp_path):
    """The home cannot be written: the start page, the file's first use, says so (not
    « enregistré dans »); the learner follows the warning and gives a writable file
    in COURS_PROGRES_DB from the notebook (%env): the start page names that file as where the
    path is recorded, never as « inutilisable » with the home's reason; and the warning does
    not say « redémarrez le noyau » (a restarted kernel forgets a %env)."""
    home, mine = tmp_path / "maison", tmp_path / "a-moi"
    home.mkdir()
    mine.mkdir()
    code = (
        "import os\n"
        "from course.progress import mon_parcours\n"
        "print(mon_parcours())\n"  # the first use of the file, as on the start page
        f"os.environ['COURS_PROGRES_DB'] = {str(mine / 'progres.db')!r}\n"
        "print(mon_parcours())\n"
    )
    env = dict(os.environ, HOME=str(home))
    env[progress.USER_ENV_VAR] = "alice"
    env.pop("COURS_PROGRES_DB", None)
    done = subprocess.run(
        ["bwrap", "--dev-bind", "/", "/", "--ro-bind", str(home), str(home)]
        + [sys.executable, "-c", code],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "système de fichiers en lecture seule" in done.stderr  # the control: it failed
    assert "redémarrez le noyau" not in done.stderr + done.stdout
    before, after = done.stdout.split("Votre parcours (alice")[1:]
    assert before.startswith(") n'est pas enregistré\u00a0: "), before  # the control
    assert after.startswith(f", enregistré dans {mine / 'progres.db'})\u00a0:"), after


def test_importing_course_progress_opens_nothing(tmp_path):
    """``import course.progress`` (and the quiz module) reads no file: it opens on first use."""
    env = dict(os.environ, COURS_PROGRES_DB=str(tmp_path / "p" / "progres.db"))
    code = "import course, course.progress, course.quiz, course.hints"
    subprocess.run([sys.executable, "-c", code], env=env, check=True, timeout=60)
    assert not (tmp_path / "p").exists()


# -- forgetting yourself with your own oublier --------------------------------------------------


def _fill(monkeypatch) -> None:
    for user in ("alice", "bob"):
        _as(monkeypatch, user)
        record("01", "quiz", quiz="l1-a", option=0, juste=True)
        record("tp", "verifier", respectes=7, criteres=7, cause=None)
    _as(monkeypatch, "alice")


async def test_your_own_oublier_empties_your_path_and_keeps_the_control(
    monkeypatch, progress_file, capsys
):
    """The TP's full-score sample, applied by oublier_ma_progression: Alice's rows and bytes are
    gone, Bob's progress and the control learner remain, the start page is empty for Alice."""
    _fill(monkeypatch)
    answer = (SUBMISSIONS / "complete_vacuum.py").read_text(encoding="utf-8")
    assert _rows(progress_file, "alice") == {"sessions": 2, "events": 2, "user_states": 1}
    assert await forget_progress(answer) is True
    out = capsys.readouterr().out
    assert "✔ Vous êtes oublié, et le témoin est intact" in out
    assert _rows(progress_file, "alice") == {"sessions": 0, "events": 0, "user_states": 0}
    assert _rows(progress_file, "bob") == {"sessions": 2, "events": 2, "user_states": 1}
    assert _rows(progress_file, progress.CONTROL_USER)["events"] == 1
    data = progress_file.read_bytes() + (
        Path(f"{progress_file}-wal").read_bytes() if Path(f"{progress_file}-wal").exists() else b""
    )
    assert b"alice" not in data and b"bob" in data  # the same search finds the control
    assert mon_parcours().empty
    _as(monkeypatch, "bob")
    assert not mon_parcours().empty


async def test_oublier_ma_progression_prints_its_verdict_and_returns_nothing(
    monkeypatch, progress_file, capsys
):
    """The annex's cell ends with ``await oublier_ma_progression()``: its verdict is the sentence
    it prints, and no True or False is left as the cell's Out[] (forget_progress returns it)."""
    _fill(monkeypatch)
    seed = (SUBMISSIONS / "graine.py").read_text(encoding="utf-8")
    assert await oublier_ma_progression(seed) is None
    assert "✘ Il reste de vous des lignes ou des octets" in capsys.readouterr().out
    answer = (SUBMISSIONS / "complete_vacuum.py").read_text(encoding="utf-8")
    assert await oublier_ma_progression(answer) is None
    assert "✔ Vous êtes oublié, et le témoin est intact" in capsys.readouterr().out
    assert _rows(progress_file, "alice") == {"sessions": 0, "events": 0, "user_states": 0}


async def test_an_oublier_that_leaves_user_states_is_told_so(monkeypatch, progress_file, capsys):
    """The seed's answer (sessions through the API only): the check sees the user_states row."""
    _fill(monkeypatch)
    answer = (SUBMISSIONS / "graine.py").read_text(encoding="utf-8")
    assert await forget_progress(answer) is False
    out = capsys.readouterr().out
    assert "✘ Il reste de vous des lignes ou des octets" in out
    assert _rows(progress_file, "alice") == {"sessions": 0, "events": 0, "user_states": 1}


@pytest.mark.parametrize("login", ["ed", "cours"])
async def test_a_short_login_found_in_what_stays_is_still_forgotten(
    login, monkeypatch, progress_file, capsys
):
    """A login that also spells part of what must stay (« ed » in the control's event,
    « cours » the app's name): the full-score answer forgets it all the same. Before, the bytes
    of the schema and of the control counted as the learner's and the answer was refused."""
    _as(monkeypatch, login)
    record("01", "quiz", quiz="l1-a", option=0, juste=True)
    answer = (SUBMISSIONS / "complete_vacuum.py").read_text(encoding="utf-8")
    assert await forget_progress(answer) is True, capsys.readouterr().out
    assert _rows(progress_file, login) == {"sessions": 0, "events": 0, "user_states": 0}
    # the control: the seed's answer, which leaves the user_states row, is still refused
    record("01", "quiz", quiz="l1-a", option=0, juste=True)
    seed = (SUBMISSIONS / "graine.py").read_text(encoding="utf-8")
    assert await forget_progress(seed) is False


async def test_a_short_login_left_in_free_pages_is_told(monkeypatch, progress_file, capsys):
    """The rows deleted without VACUUM (secure_delete off, as upstream SQLite, macOS and
    conda-forge build it): the login's bytes stay in the file's free pages, beyond what a clean
    copy of the rows that stay holds, and the learner is told so."""
    _as(monkeypatch, "ed")
    for n in range(40):
        record("01", "quiz", quiz=f"l1-{n}", option=0, juste=True, note="ed " * 50)
    cell = (
        "def oublier(service, user_id):\n"
        "    conn = sqlite3.connect(service.db_path)\n"
        "    conn.execute('PRAGMA secure_delete = OFF')  # upstream's default (not Debian's)\n"
        "    with conn:\n"
        "        for table in ('events', 'sessions', 'user_states'):\n"
        "            conn.execute(f'DELETE FROM {table} WHERE user_id = ?', (user_id,))\n"
        "    conn.execute('PRAGMA wal_checkpoint(TRUNCATE)')\n"
        "    conn.close()\n"
    )
    assert await forget_progress(cell) is False, capsys.readouterr().out
    assert _rows(progress_file, "ed") == {"sessions": 0, "events": 0, "user_states": 0}
    assert "✘ Il reste de vous des lignes ou des octets" in capsys.readouterr().out


@pytest.mark.slow
def test_a_read_only_progress_file_is_said_once_by_recommencer(tmp_path):
    """A progress file that may be read, not written (a read-only home, bound so that even
    root cannot write): recommencer removes the lesson's files and says in a few words why its
    progress stays, the path once (not the service's whole sentence in parentheses, with the
    path twice, « droits du fichier » for a read-only mount and « .). »)."""
    home, lessons = tmp_path / "maison", tmp_path / "lecons"
    lessons.mkdir()
    env = dict(os.environ, HOME=str(home))
    env[progress.USER_ENV_VAR] = "alice"
    env.pop("COURS_PROGRES_DB", None)
    python = [sys.executable, "-c"]
    first = "from course.progress import record\nrecord('04', 'exercice', exercice='x')"
    subprocess.run([*python, first], env=env, check=True, timeout=60)
    path = home / ".cours-memoire-tuteur" / "progres.db"
    assert _rows(path, "alice")["events"] == 1  # the control: there is progress to erase
    (lessons / "lecon04.db").write_bytes(b"")

    def with_home_read_only(code: str) -> subprocess.CompletedProcess:
        bind = ["bwrap", "--dev-bind", "/", "/", "--ro-bind", str(home), str(home)]
        return subprocess.run(
            [*bind, *python, code], env=env, capture_output=True, text=True, timeout=60
        )

    again = f"from course.progress import recommencer\nrecommencer('04', {str(lessons)!r})"
    done = with_home_read_only(again)
    assert done.returncode == 0, done.stderr
    assert done.stdout == (
        "Leçon 4 recommencée\u00a0: fichiers supprimés\u00a0: lecon04.db\u00a0; sa progression "
        f"n'a pas pu être effacée ({path}\u00a0: fichier en lecture seule)."
        " Si son notebook est ouvert, redémarrez son noyau (menu Noyau) avant de la reprendre.\n"
    ), done.stdout
    assert _rows(path, "alice")["events"] == 1
    # a quiz answered there: the warning and the start page say the same few words
    answer = (
        "from course.progress import record, mon_parcours\n"
        "record('04', 'exercice', exercice='y')\nprint(mon_parcours().lines()[0])"
    )
    done = with_home_read_only(answer)
    assert done.returncode == 0, done.stderr
    assert f"({path}\u00a0: fichier en lecture seule). La leçon continue" in done.stderr
    assert "droits du fichier" not in done.stderr + done.stdout and "))" not in done.stderr
    assert f"{path} est inutilisable (fichier en lecture seule)\u00a0; " in done.stdout


@pytest.mark.slow
def test_recommencer_in_a_read_only_lesson_folder_says_which_files_stay(tmp_path):
    """make recommencer in a course folder that became read-only (a hub's shared copy, a
    mount): the files it cannot remove are named, with the reason in French, and its progress
    is erased all the same; before, OSError « [Errno 30] Read-only file system » and a
    traceback, nothing erased."""
    lessons = tmp_path / "lecons"
    lessons.mkdir()
    (lessons / "lecon04.db").write_bytes(b"")
    env = dict(os.environ, COURS_PROGRES_DB=str(tmp_path / "progres.db"))
    env[progress.USER_ENV_VAR] = "alice"
    subprocess.run(
        [sys.executable, "-c", "from course.progress import record\nrecord('04', 'bilan')"],
        env=env,
        check=True,
        timeout=60,
    )
    done = subprocess.run(
        ["bwrap", "--dev-bind", "/", "/", "--ro-bind", str(lessons), str(lessons)]
        + [sys.executable, "-m", "course.progress", "recommencer", "04", str(lessons)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert done.stdout == (
        "Leçon 4 recommencée\u00a0: aucun fichier supprimé\u00a0; non supprimé\u00a0: "
        "lecon04.db (système de fichiers en lecture seule)\u00a0; sa progression est effacée, "
        "celle des autres étapes reste. Si son notebook est ouvert, redémarrez son noyau (menu "
        "Noyau) avant de la reprendre.\n"
    ), done.stdout
    assert (lessons / "lecon04.db").exists()  # the control: it was read-only indeed
    assert _rows(tmp_path / "progres.db", "alice")["events"] == 0


async def test_a_damaged_progress_file_is_said_by_recommencer_and_oublier(
    monkeypatch, progress_file, tmp_path, capsys
):
    """Not a SQLite file (a copy gone wrong, a crash): recommencer still removes the lesson's
    files and says the progress could not be erased; oublier_ma_progression says it and does
    nothing. Both raised before (a traceback in the learner's notebook); the file is untouched."""
    _as(monkeypatch, "alice")
    damaged = b"pas une base SQLite " * 50
    progress_file.parent.mkdir(parents=True, exist_ok=True)
    progress_file.write_bytes(damaged)
    (tmp_path / "lecon04.db").write_bytes(b"")
    assert recommencer("04", tmp_path) == ["lecon04.db"]
    out = capsys.readouterr().out
    assert "Leçon 4 recommencée" in out and "n'a pas pu être effacée" in out
    answer = (SUBMISSIONS / "complete_vacuum.py").read_text(encoding="utf-8")
    assert await forget_progress(answer) is False
    assert "✘ Votre fichier de progression est inutilisable" in capsys.readouterr().out
    assert progress_file.read_bytes() == damaged


def test_a_locked_progress_file_freezes_one_click_not_each(monkeypatch, progress_file):
    """Another program holds the file's write lock (a sqlite3 shell left in a transaction):
    the first answer waits TIMEOUT and warns, the next ones do not wait (before: TIMEOUT each,
    the kernel frozen at every click); once the lock is gone, recording comes back."""
    _as(monkeypatch, "alice")
    monkeypatch.setattr(progress, "TIMEOUT", 2.0)
    monkeypatch.setattr(progress, "RETRY_AFTER", 4.0)
    assert record("01", "quiz", quiz="l1-a", option=0, juste=True)
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sqlite3, sys, time\n"
            "c = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
            "c.execute('BEGIN EXCLUSIVE'); print('verrou', flush=True); time.sleep(60)\n",
            str(progress_file),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "verrou"
        waits = []
        for n in range(3):
            start = time.monotonic()
            assert record("01", "quiz", quiz=f"l1-{n}", option=0, juste=True) is False
            waits.append(time.monotonic() - start)
        assert waits[0] >= 2.0 and max(waits[1:]) < 1.0, waits  # the control: the first waited
    finally:
        holder.kill()
        holder.wait()
    time.sleep(4.0)
    assert record("01", "quiz", quiz="l1-b", option=0, juste=True) is True
    progress.reset_cache()
    # (the first waiting write may land once the lock is gone: its thread waited on)
    assert {"l1-a", "l1-b"} <= {m.get("quiz") for _s, m in progress._events()}


@pytest.mark.skipif(not hasattr(os, "getuid") or os.getuid() != 0, reason="chown: root")
@pytest.mark.parametrize("planted", ["progres.db", "progres.db-wal"])
def test_a_progress_file_a_classmate_made_first_is_refused(planted, tmp_path, monkeypatch, capsys):
    """COURS_PROGRES_DB in a folder everyone may write (/tmp): a classmate (another uid) made
    the file, or its -wal, first, open to all. Nothing of the learner is written into it (before:
    every answer went into the classmate's file); the learner's own file in a private folder is
    the control, recorded and made private."""
    shared = tmp_path / "partage"
    shared.mkdir(mode=0o1777)
    shared.chmod(0o1777)
    trap = shared / planted
    trap.write_bytes(b"")
    os.chown(trap, 1, 1)  # daemon: a classmate
    trap.chmod(0o666)
    monkeypatch.setenv("COURS_PROGRES_DB", str(shared / "progres.db"))
    _as(monkeypatch, "victime")
    monkeypatch.setattr(progress, "_warned", False)  # a new kernel: its one warning
    assert record("01", "quiz", quiz="l1-a", option=0, juste=True) is False
    assert "appartient à un autre compte" in capsys.readouterr().err
    assert all(b"victime" not in p.read_bytes() for p in shared.iterdir() if p.is_file())
    own = tmp_path / "prive" / "progres.db"
    own.parent.mkdir(mode=0o700)
    own.write_bytes(b"")
    own.chmod(0o644)
    monkeypatch.setenv("COURS_PROGRES_DB", str(own))
    progress.reset_cache()
    assert record("01", "quiz", quiz="l1-a", option=0, juste=True) is True
    assert own.stat().st_mode & 0o777 == 0o600


def test_malformed_events_leave_the_start_page_and_the_hints_working(monkeypatch, progress_file):
    """Events without their facts (written by the learner's own code through record, a hand
    edit, another version of the course): left out. Before, a KeyError broke the start page and
    every indice() until the file was erased. The well-formed ones are the control."""
    from course import hints

    _as(monkeypatch, "alice")
    record("01", "quiz", option=0)
    record("tp", "indice", niveau=1)
    record("02", "indice", echelle=["x"], niveau=1)
    record("01", "bilan", total="3")
    record("01", "quiz", quiz="l1-a", option=1, juste=True)
    progress.reset_cache()
    assert "1. Choisir un service de session\u00a0: commencé" in repr(mon_parcours())
    assert progress.quiz_answers("l1-a") == [1]
    hints.indice(1, "requete_niveau")
    assert progress.hints_used() == {("requete_niveau", 1)}


async def test_a_login_left_in_a_persisted_journal_is_told(monkeypatch, progress_file, capsys):
    """An oublier that sets journal_mode=PERSIST (secure_delete off, as upstream builds it): the
    rows and the file are clean, but the -journal SQLite keeps holds the pages as they were, the
    login in them. Before, only the file and the -wal were searched: « Vous êtes oublié »."""
    _as(monkeypatch, "alice")
    for n in range(5):
        record("01", "quiz", quiz=f"l1-{n}", option=0, juste=True)
    cell = (
        "def oublier(service, user_id):\n"
        "    conn = sqlite3.connect(service.db_path)\n"
        "    conn.execute('PRAGMA secure_delete = OFF')\n"
        "    conn.execute('PRAGMA journal_mode = PERSIST')\n"
        "    with conn:\n"
        "        for table in ('events', 'sessions', 'user_states'):\n"
        "            conn.execute(f'DELETE FROM {table} WHERE user_id = ?', (user_id,))\n"
        "    conn.execute('VACUUM')\n"
        "    conn.close()\n"
    )
    assert await forget_progress(cell) is False, capsys.readouterr().out
    assert _rows(progress_file, "alice") == {"sessions": 0, "events": 0, "user_states": 0}
    assert b"alice" not in progress_file.read_bytes()  # the file itself is clean
    assert b"alice" in Path(f"{progress_file}-journal").read_bytes()  # the journal is not
    assert "✘ Il reste de vous des lignes ou des octets" in capsys.readouterr().out


async def test_an_empty_path_does_not_pass_a_function_that_does_nothing(
    monkeypatch, progress_file, capsys
):
    """A learner with nothing recorded yet: a function that does nothing was told « Vous êtes
    oublié » (nothing was there to erase). Now the learner is told their function was not put to
    the test; once a quiz is recorded, the same function is told it leaves them (the control)."""
    _as(monkeypatch, "zoe")
    nothing = "def oublier(service, user_id):\n    pass\n"
    assert await forget_progress(nothing) is False
    out = capsys.readouterr().out
    assert "Rien de vous" in out and "Vous êtes oublié" not in out
    record("01", "quiz", quiz="l1-a", option=0, juste=True)
    assert await forget_progress(nothing) is False
    assert "✘ Il reste de vous des lignes ou des octets" in capsys.readouterr().out


async def test_an_oublier_that_removes_the_whole_file_is_told_the_control_changed(
    monkeypatch, progress_file, capsys
):
    """``os.remove(service.db_path)``: the learner is gone, and so are the control and everyone
    else. Before, reading the file again ended in a DbFileError traceback."""
    _fill(monkeypatch)
    cell = "import os\n\ndef oublier(service, user_id):\n    os.remove(service.db_path)\n"
    assert await forget_progress(cell) is False
    out = capsys.readouterr().out
    assert "✘ Le témoin a changé\u00a0: votre fonction a supprimé tout le fichier" in out, out
    assert "Vous êtes oublié" not in out


async def test_an_oublier_that_breaks_the_file_is_told_the_control_changed(
    monkeypatch, progress_file, capsys
):
    """The file overwritten with bytes that are not SQLite: the same verdict, with why."""
    _fill(monkeypatch)
    cell = (
        "from pathlib import Path\n\n"
        "def oublier(service, user_id):\n"
        "    Path(service.db_path).write_bytes(b'plus rien' * 1000)\n"
    )
    assert await forget_progress(cell) is False
    out = capsys.readouterr().out
    assert (
        "✘ Le témoin a changé\u00a0: après votre fonction, le fichier de progression ne se lit"
        in out
    )
    assert "Vous êtes oublié" not in out


@pytest.mark.parametrize(
    ("raised", "said"),
    [
        ("asyncio.CancelledError", "CancelledError"),
        ("KeyboardInterrupt", "KeyboardInterrupt"),
        ("SystemExit(3)", "SystemExit\u00a0: 3"),
        ("ValueError('pas ici')", "ValueError\u00a0: pas ici"),  # the control: said already
    ],
)
async def test_an_oublier_that_raises_what_stops_a_program_is_said(
    raised, said, monkeypatch, progress_file, capsys
):
    """CancelledError, KeyboardInterrupt and SystemExit are not Exceptions: they went through
    « said, never a traceback » and ended the cell in one."""
    _fill(monkeypatch)
    cell = f"import asyncio\n\nasync def oublier(service, user_id):\n    raise {raised}\n"
    assert await oublier_ma_progression(cell) is None
    assert capsys.readouterr().out == f"✘ Votre fonction oublier a levé {said}\n"
    assert _rows(progress_file, "alice") == {"sessions": 2, "events": 2, "user_states": 1}


async def test_the_cells_own_cancellation_still_cancels_it(
    tmp_path, monkeypatch, progress_file, capsys
):
    """What the learner's code raises is said; the cell's task cancelled from outside (the
    notebook stopping it) still ends cancelled, not told « a levé CancelledError »."""
    import asyncio

    _fill(monkeypatch)
    started = tmp_path / "commencee"
    cell = (
        "import asyncio\nfrom pathlib import Path\n\n"
        "async def oublier(service, user_id):\n"
        f"    Path({str(started)!r}).touch()\n"
        "    await asyncio.sleep(60)\n"
    )
    task = asyncio.create_task(forget_progress(cell))
    while not started.exists():  # in the learner's function
        await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert "a levé" not in capsys.readouterr().out


def test_an_unawaited_service_call_is_said_in_french(tmp_path):
    """``service.delete_session(...)`` without await, as a learner's cell runs it (its own
    process, Python's warnings on): one French sentence, the labo's, in the output, and not
    Python's « RuntimeWarning: coroutine ... was never awaited » nor « Enable tracemalloc »."""
    env = {
        **os.environ,
        "COURS_PROGRES_DB": str(tmp_path / "progres.db"),
        "COURS_PROGRES_USER": "alice",
    }
    cell = (
        "async def oublier(service, user_id):\n"
        "    service.delete_session(app_name=APP_NAME, user_id=user_id, session_id='01')\n"
    )
    code = (
        "import asyncio\n"
        "from course.progress import oublier_ma_progression, record\n"
        "record('01', 'quiz', quiz='l1-a', option=0, juste=True)\n"
        f"asyncio.run(oublier_ma_progression({cell!r}))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120
    )
    assert (done.returncode, done.stderr) == (0, ""), done.stderr
    assert "✘ De plus, un appel au service n'a pas été attendu" in done.stdout, done.stdout
    assert "✘ Il reste de vous des lignes ou des octets" in done.stdout


async def test_a_tp_cell_too_deep_for_the_parser_is_said(
    tmp_path, monkeypatch, progress_file, capsys
):
    """The saved TP's oublier cell holds an expression nested thousands of times (the attack's
    grader/submissions/expression_profonde.py, and deeper): one French sentence, not a
    RecursionError or MemoryError from reading the notebook."""
    _fill(monkeypatch)
    (tp := tmp_path / "oublier").mkdir()
    (lessons := tmp_path / "lecons").mkdir()
    monkeypatch.chdir(lessons)
    attack = (SUBMISSIONS / "expression_profonde.py").read_text(encoding="utf-8")
    deeper = attack.replace("-" * 3000, "-" * 20000)
    assert deeper != attack
    for source in (attack, deeper):
        nb = nbformat.v4.new_notebook()
        meta = {"nbgrader": {"grade_id": "oublier"}}
        nb.cells.append(nbformat.v4.new_code_cell(source, metadata=meta))
        nbformat.write(nb, tp / "oublier.ipynb")
        # said, whatever it is (Python 3.13 parses the attack's depth: its function then runs)
        assert await oublier_ma_progression() is None
        out = capsys.readouterr().out
    assert "Votre cellule oublier de ../oublier/oublier.ipynb est trop imbriquée" in out


# -- starting a lesson again --------------------------------------------------------------------


def _run_lesson(name: str, folder: Path) -> None:
    nb = nbformat.read(SOLUTIONS / name, as_version=4)
    NotebookClient(
        nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(folder)}}
    ).execute(env=network_free_env(), cwd=str(folder))


@pytest.mark.slow
def test_recommencer_removes_what_the_lesson_made_and_its_progress_only(
    tmp_path, monkeypatch, capsys
):
    """Lesson 3 is run in a copy of the lessons' folder: the files it leaves are exactly what
    recommencer("03") removes; another lesson's file, the learner's own file and the progress of
    the other steps stay."""
    folder = tmp_path / "lecons"
    shutil.copytree(REPO / "notebooks" / "lecons", folder)
    (folder / "lecon02.db").write_bytes(b"")  # another lesson's file
    (folder / "mes_notes.db").write_text("à moi")  # the learner's own
    before = set(folder.iterdir())
    _as(monkeypatch, "alice")  # the lesson's kernel inherits it
    _run_lesson("03_ce_que_contient_le_fichier.ipynb", folder)
    made = {p.name for p in set(folder.iterdir()) - before}
    assert made and all(name.startswith("lecon03.db") for name in made), made
    progress.reset_cache()
    # the lesson's own check cell recorded its exercise, and its bilan the number of quizzes
    ran = [m for s, m in progress._events() if s == "03"]
    assert {"type": "exercice", "exercice": "requete_niveau"} in ran
    lesson = nbformat.read(SOLUTIONS / "03_ce_que_contient_le_fichier.ipynb", as_version=4)
    quizzes = sum(c.source.startswith("Quiz(") for c in lesson.cells)
    assert quizzes and [m["total"] for m in ran if m["type"] == "bilan"] == [quizzes]
    record("02", "quiz", quiz="l2-a", option=0, juste=True)
    assert sorted(recommencer("03", folder)) == sorted(made)
    assert set(folder.iterdir()) == before
    progress.reset_cache()
    steps = {s for s, _m in progress._events()}
    assert "03" not in steps and "02" in steps
    assert "Leçon 3 recommencée" in capsys.readouterr().out
    with pytest.raises(ValueError, match="Leçon inconnue"):
        recommencer("99", folder)
    # learner's walk, stop 58: « TP » is listed by the start page; it said « Leçon inconnue »
    # and by each TP's folder name (stop 59: « Leçon inconnue » for « oublier_partage »)
    for name in ("tp", "TP", "oublier", "oublier_partage"):
        with pytest.raises(ValueError, match="Un TP ne se recommence pas ainsi"):
            recommencer(name, folder)
    assert set(folder.iterdir()) == before


def test_recommencer_shows_no_list_under_its_sentence(tmp_path):
    """Learner's walk, stop 58: « ['lecon03.db'] » came under the sentence that says it."""
    from IPython.core.formatters import DisplayFormatter

    removed = recommencer("03", tmp_path)
    assert removed == [] and DisplayFormatter().format(removed) == ({}, {})


def test_recommencer_keeps_the_learners_own_copies_and_folders(tmp_path):
    """Only what SQLite keeps beside the lesson's databases goes: the learner's copy
    « lecon04.db.sauvegarde », a folder « lecon04.db-copies » and « essai_notes.db.txt » stay
    (the globs lecon04.db* and essai_*.db* removed them, the folder with everything in it)."""
    made = ["lecon04.db", "lecon04.db-wal", "lecon04.db-shm", "essai_fk.db", "essai_pages.db-wal"]
    for name in made:
        (tmp_path / name).write_bytes(b"")
    mine = ["lecon04.db.sauvegarde", "essai_notes.db.txt", "lecon04.db-copies/copie.db"]
    for name in mine:
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text("à moi", encoding="utf-8")
    assert sorted(recommencer("04", tmp_path)) == sorted(made)  # the control: these go
    assert all((tmp_path / name).read_text(encoding="utf-8") == "à moi" for name in mine)


def test_recommencer_removes_links_never_what_they_point_to(tmp_path):
    """« lecon07-instances » and « lecon07.db » planted as symbolic links to the learner's own
    folder and file: the links go, the folder and the file stay whole."""
    lessons, mine = tmp_path / "lecons", tmp_path / "a_moi"
    lessons.mkdir()
    mine.mkdir()
    (mine / "notes.db").write_text("à moi", encoding="utf-8")
    (lessons / "lecon07-instances").symlink_to(mine, target_is_directory=True)
    (lessons / "lecon07.db").symlink_to(mine / "notes.db")
    assert sorted(recommencer("07", lessons)) == ["lecon07-instances", "lecon07.db"]
    assert list(lessons.iterdir()) == []
    assert (mine / "notes.db").read_text(encoding="utf-8") == "à moi"


def test_make_recommencer_runs_the_same_command():
    dry = subprocess.run(
        ["make", "-n", "--no-print-directory", "recommencer", "LECON=04"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    assert "cd notebooks/lecons && '" in dry and "-m course.progress recommencer '04'" in dry


def test_the_command_line_recommencer(tmp_path):
    (tmp_path / "lecon05.db").write_bytes(b"")
    (tmp_path / "lecon05.db-wal").write_bytes(b"")
    (tmp_path / "lecon01.db").write_bytes(b"")
    done = subprocess.run(
        [sys.executable, "-m", "course.progress", "recommencer", "5", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["lecon01.db"]


def test_the_command_line_names_an_unknown_lesson_in_french_quotes(tmp_path):
    """`make recommencer LECON=6` (the same command: see above): « » with non-breaking spaces,
    not Python's quotes; nothing removed (the control, that a known one works: just above)."""
    (tmp_path / "lecon05.db").write_bytes(b"")
    done = subprocess.run(
        [sys.executable, "-m", "course.progress", "recommencer", "6", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    known = ", ".join(f"«\u00a0{lesson.key}\u00a0»" for lesson in LESSONS if lesson.key != "tp")
    assert known.startswith("«\u00a000\u00a0», «\u00a001\u00a0»")
    assert done.stderr == f"Leçon inconnue\u00a0: «\u00a06\u00a0» (connues\u00a0: {known}).\n"
    assert [p.name for p in tmp_path.iterdir()] == ["lecon05.db"]
    with pytest.raises(ValueError, match="«\u00a0'9\\\\tx'\u00a0»"):
        recommencer("9\tx", tmp_path)  # a control character is shown, not printed


def test_recommencer_refuses_a_lesson_a_notebook_still_runs(tmp_path):
    """Helper attack (a learner's path): ``make recommencer LECON=07`` while lesson 7 ran in a
    notebook deleted its instances' files under it (« unable to open database file » at the
    next cell). While a kernel holds the lesson's PostgreSQL cluster (its watchdog's lock,
    held here by another process as the watchdog holds it), nothing is removed; once it is let
    go, the lesson starts again."""
    from course.postgres import dossier_cluster
    from course.postgres._server import LOCK_NAME

    folder = tmp_path / "lecons"
    (folder / "lecon07-instances").mkdir(parents=True)
    (folder / "lecon07-instances" / "instance1.db").write_bytes(b"")
    cluster = dossier_cluster("lecon07-pg", folder)
    cluster.mkdir(parents=True)
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import fcntl, sys, time\n"
            "lock = open(sys.argv[1], 'wb')\n"
            "fcntl.flock(lock, fcntl.LOCK_EX)\n"
            "lock.write(b'4242'); lock.flush()\n"
            "print('held', flush=True)\n"
            "time.sleep(120)\n",
            str(cluster / LOCK_NAME),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    command = [sys.executable, "-m", "course.progress", "recommencer", "07", str(folder)]
    try:
        assert holder.stdout.readline() == "held\n"
        refused = subprocess.run(command, capture_output=True, text=True, cwd=REPO, timeout=120)
        assert refused.returncode == 2, refused.stdout + refused.stderr
        assert "Leçon 7 non recommencée\u00a0: elle tourne encore dans un notebook" in (
            refused.stderr
        )
        assert "Rien n'a été supprimé" in refused.stderr and "Traceback" not in refused.stderr
        assert (folder / "lecon07-instances" / "instance1.db").exists()
    finally:
        holder.kill()
        holder.wait()
    done = subprocess.run(command, capture_output=True, text=True, cwd=REPO, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert not (folder / "lecon07-instances").exists()
    shutil.rmtree(cluster.parent if cluster.parent != folder else cluster, ignore_errors=True)


def test_an_unknown_lesson_to_start_again_is_one_french_line(tmp_path):
    """Learner's walk, stop 57: ``recommencer("2b")`` in the start page showed a ValueError's
    traceback through progress.py; still a ValueError, shown as its French line."""
    with pytest.raises(ValueError) as refused:
        recommencer("2b", tmp_path)
    assert refused.value._render_traceback_() == [
        "RecommencerImpossible\u00a0: Leçon inconnue\u00a0: «\u00a02b\u00a0» (connues\u00a0: "
        + ", ".join(f"«\u00a0{k}\u00a0»" for k in progress._BY_KEY if k != "tp")
        + ")."
    ]
