"""Every absence a lesson shows can fail: the same notebook, run with the value present,
makes the same check report it.

Each test reads the claim in the lesson as executed (``executed_lessons``), then runs the lesson
up to that cell with one line changed so that the absent thing is there: the same check must
report it.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest
from helpers import REPO
from notebook_text import text_of

pytestmark = pytest.mark.slow  # nbgrader, kernels or the sandbox: not in make test-fast

SOLUTIONS = REPO / "solutions" / "lecons"
NBSP = "\u00a0"


@pytest.fixture
def run_until(tmp_path: Path, run_notebook):
    """``run_until(lesson, cell_id, change)``: the lesson's cells up to ``cell_id``, run in a
    fresh kernel after ``change=(cell_id, old, new)`` edited one cell (``old`` must occur)."""

    def run(lesson: str, cell_id: str, change: tuple[str, str, str]) -> str:
        nb = nbformat.read(SOLUTIONS / lesson, as_version=4)
        ids = [c.id for c in nb.cells]
        nb.cells = nb.cells[: ids.index(cell_id) + 1]
        target, old, new = change
        cell = next(c for c in nb.cells if c.id == target)
        assert old in cell.source, f"{target} no longer contains {old!r}"
        cell.source = cell.source.replace(old, new)
        path = tmp_path / lesson
        nbformat.write(nb, path)
        ran, _seconds = run_notebook(path, tmp_path)
        return text_of(ran, cell_id)

    return run


def written(executed_lessons, lesson: str, cell_id: str) -> str:
    """What the cell printed in the lesson as written."""
    return text_of(executed_lessons[lesson][0], cell_id)


def count_after(text: str, label: str) -> int:
    m = re.search(rf"{re.escape(label)}.*?: (\d+)", text)
    assert m, text
    return int(m.group(1))


def test_lesson_1_restart_check_finds_sessions_that_survive(run_until, executed_lessons):
    lesson = "01_choisir_un_service.ipynb"
    as_written = written(executed_lessons, lesson, "l1-c15")
    assert "InMemory, après redémarrage : 0 session" in as_written
    kept = run_until(
        lesson,
        "l1-c15",
        ("l1-c15", "apres_redemarrage = InMemorySessionService()", "apres_redemarrage = memoire"),
    )
    assert "InMemory, après redémarrage : 1 session" in kept


def test_lesson_3_temp_key_search_finds_a_stored_key(run_until, executed_lessons):
    lesson = "03_ce_que_contient_le_fichier.ipynb"
    as_written = written(executed_lessons, lesson, "l3-c11")
    assert count_after(as_written, "« brouillon »") == 0
    assert count_after(as_written, "« etape »") > 0
    stored = run_until(lesson, "l3-c11", ("l3-c11", '"temp:brouillon"', '"brouillon"'))
    assert count_after(stored, "« brouillon »") > 0


def test_lesson_3_app_scope_check_sees_a_user_key_of_the_same_learner(run_until, executed_lessons):
    lesson = "03_ce_que_contient_le_fichier.ipynb"
    assert "user:langue          : None" in written(executed_lessons, lesson, "l3-c35")
    same_learner = run_until(lesson, "l3-c35", ("l3-c35", 'user_id="alice"', 'user_id="bob"'))
    assert "user:langue          : fr" in same_learner


def test_lesson_4_counts_report_sessions_left_behind(run_until, executed_lessons):
    lesson = "04_effacer_un_eleve.ipynb"
    as_written = written(executed_lessons, lesson, "l4-c05")
    assert "alice : 0 session(s), 0 événement(s), 1 ligne(s)" in as_written
    not_deleted = run_until(
        lesson,
        "l4-c05",
        (
            "l4-c05",
            '(await service.list_sessions(app_name=APP_NAME, user_id="alice")).sessions',
            "[]",
        ),
    )
    assert "alice : 2 session(s), 22 événement(s), 1 ligne(s)" in not_deleted


def test_lesson_4_orphan_count_reports_orphans_when_the_pragma_is_missing(
    run_until, executed_lessons
):
    lesson = "04_effacer_un_eleve.ipynb"
    as_written = written(executed_lessons, lesson, "l4-c11")
    assert "Avec PRAGMA foreign_keys = ON, événements orphelins : 0" in as_written
    without = run_until(lesson, "l4-c11", ("l4-c11", "if cascade:", "if False:"))
    assert count_after(without, "Avec PRAGMA foreign_keys = ON, événements orphelins") > 0


def test_lesson_4_byte_search_finds_a_name_that_was_not_deleted(run_until, executed_lessons):
    lesson = "04_effacer_un_eleve.ipynb"
    last = re.compile(r"après VACUUM \+ checkpoint\s+: Bob \{'fichier': (\d+), '-wal': (\d+)\}")
    as_written = last.search(written(executed_lessons, lesson, "l4-c14"))
    assert as_written and as_written.groups() == ("0", "0")
    change = ("l4-c14", '(APP_NAME, "bob"))\n    c.commit()', '(APP_NAME, "zoe"))\n    c.commit()')
    kept = last.search(run_until(lesson, "l4-c14", change))
    assert kept and int(kept.group(1)) > 0


def test_lesson_4_secure_delete_step_finds_the_name_when_the_pragma_is_off(
    run_until, executed_lessons
):
    lesson = "04_effacer_un_eleve.ipynb"
    line = re.compile(r"secure_delete \+ checkpoint\s*: Bob \{'fichier': (\d+), '-wal': (\d+)\}")
    as_written = line.search(written(executed_lessons, lesson, "l4-c14"))
    assert as_written and as_written.groups() == ("0", "0")
    change = ("l4-c14", "(autre, secure_delete=True)", "(autre, secure_delete=False)")
    kept = line.search(run_until(lesson, "l4-c14", change))
    assert kept and int(kept.group(1)) > 0


def test_lesson_5_file_listing_and_byte_search_see_an_open_wal(run_until, executed_lessons):
    lesson = "05_reprendre_apres_redemarrage.ipynb"
    after = "Après   : ['lecon05.db']"
    assert after in written(executed_lessons, lesson, "l5-c04")
    left_open = run_until(
        lesson,
        "l5-c04",
        (
            "l5-c04",
            "async with SqliteSessionService(DB) as service:",
            "service = SqliteSessionService(DB)\nif True:",
        ),
    )
    assert "Après   : ['lecon05.db', 'lecon05.db-shm', 'lecon05.db-wal']" in left_open
    assert "'lecon05.db-wal': 1" in left_open.split("Après")[1]


def test_lesson_5_deleted_session_check_returns_a_session_that_exists(run_until, executed_lessons):
    lesson = "05_reprendre_apres_redemarrage.ipynb"
    deleted = "get_session sur la session supprimée : None"
    assert deleted in written(executed_lessons, lesson, "l5-c19")
    kept = run_until(
        lesson,
        "l5-c19",
        (
            "l5-c19",
            'await service.delete_session(app_name=APP_NAME, user_id="alice", session_id=seconde)',
            "pass",
        ),
    )
    assert deleted not in kept and "get_session sur la session supprimée : id=" in kept


def test_appendix_count_finds_sessions_that_adk_did_not_delete(run_until, executed_lessons):
    lesson = "08_annexe_adk.ipynb"
    gone = "Alice : 0 session(s), 0 événement(s), 1 ligne(s) dans user_states"
    assert gone in written(executed_lessons, lesson, "l8-c14")
    kept = run_until(
        lesson,
        "l8-c14",
        (
            "l8-c14",
            'await adk.delete_session(app_name=APP_NAME, user_id="alice", session_id=s.id)',
            "pass",
        ),
    )
    m = re.search(r"Alice : (\d+) session\(s\), (\d+) événement", kept)
    assert m and int(m.group(1)) > 0 and int(m.group(2)) > 0


def test_appendix_listing_shows_a_wal_when_the_adk_file_has_one(run_until, executed_lessons):
    lesson = "08_annexe_adk.ipynb"
    no_wal = "créé par ADK       : mode delete ; pendant une lecture : ['annexe_adk_neuf.db']"
    assert no_wal in written(executed_lessons, lesson, "l8-c09")
    in_wal = run_until(
        lesson,
        "l8-c09",
        (
            "l8-c09",
            "neuf = AdkSqliteSessionService(str(NEUF))",
            "sqlite3.connect(NEUF).execute('PRAGMA journal_mode = WAL').connection.close()\n"
            "neuf = AdkSqliteSessionService(str(NEUF))",
        ),
    )
    assert "créé par ADK       : mode wal" in in_wal and "annexe_adk_neuf.db-wal" in in_wal
