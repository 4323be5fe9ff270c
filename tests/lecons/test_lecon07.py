"""Lesson 7 (issue 23): three tutor instances behind a balancer, a shared PostgreSQL through ADK
2.10's DatabaseSessionService, and what forgetting a learner leaves on that server.

Its claims are read from the run that ``executed_lessons`` makes (a real server, three real
processes); a second run without PostgreSQL shows the one French sentence and clean skips.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from helpers import REPO, processes_matching
from notebook_text import text_of

NAME = "07_partager_la_memoire.ipynb"
NBSP = "\u00a0"


def turns(text: str) -> list[tuple[int, int, str]]:
    """(instance, pid, what it said) for each turn the balancer printed."""
    return [
        (int(i), int(pid), said)
        for i, pid, said in re.findall(r"^  instance (\d) \(pid (\d+)\) : (.*)$", text, re.M)
    ]


def counts(text: str, step: str) -> dict[str, int]:
    found = re.search(rf"^{re.escape(step)}\s*: (\{{.*?\}})", text, re.M)
    assert found, (step, text)
    return eval(found.group(1))  # noqa: S307 (a printed dict literal)


@pytest.fixture(scope="module")
def lesson(executed_lessons):
    return executed_lessons[NAME][0]


def test_one_sqlite_file_per_instance_loses_the_session_the_shared_base_keeps_it(lesson):
    ready = text_of(lesson, "l7-c05")
    pids = [int(p) for p in re.search(r"pid : \[([\d, ]+)\]", ready).group(1).split(", ")]
    kernel = int(re.search(r"ce notebook : (\d+)", ready).group(1))
    assert len(set(pids)) == 3 and kernel not in pids, ready
    control = turns(text_of(lesson, "l7-c07"))
    assert [(i, pid) for i, pid, _ in control] == list(zip((1, 2, 3), pids, strict=True))
    assert control[0][2].startswith("Bonjour Alice")
    assert [said for _, _, said in control[1:]] == ["session inconnue"] * 2
    shared = turns(text_of(lesson, "l7-c09"))
    assert [i for i, _, _ in shared[:3]] == [1, 2, 3]
    assert shared[0][2].startswith("Bonjour Alice")
    assert "niveau 3" in shared[1][2] and shared[2][2].startswith("Bravo")
    assert all(said != "session inconnue" for _, _, said in shared)


def test_the_tables_adk_creates_on_postgresql(lesson):
    text = text_of(lesson, "l7-c14")
    four = "['app_states', 'events', 'sessions', 'user_states']"
    assert f"Fichier SQLite d'une instance : {four}" in text
    assert "Base PostgreSQL partagée      : ['adk_internal_metadata', 'app_states'," in text
    assert "En plus sur PostgreSQL          : ['adk_internal_metadata']" in text
    assert "'event_data': ('TEXT', 'jsonb')" in text and "'state': ('TEXT', 'jsonb')" in text
    assert "REFERENCES sessions(app_name, user_id, id) ON DELETE CASCADE" in text


def test_the_measures_are_printed_from_this_run(lesson):
    """Figures from this run (never compared to a fixed speed: the machine is shared)."""
    text = text_of(lesson, "l7-c18")
    for store in (
        "SQLite (service du cours)",
        "SQLite (service d'ADK)",
        "PostgreSQL (service d'ADK)",
    ):
        turn = re.search(rf"Un tour, {re.escape(store)}\s+:\s+(\d+) ms \(médiane de 6\)", text)
        assert turn, (store, text)
    ratios = re.search(
        r"PostgreSQL / SQLite d'ADK : ([\d.]+) ; PostgreSQL / SQLite du cours : ([\d.]+)", text
    )
    assert ratios and float(ratios.group(1)) > 0 and float(ratios.group(2)) > 0, text
    rates = re.search(r"une instance (\d+) tours/s, trois instances (\d+) tours/s", text)
    assert rates and int(rates.group(1)) > 0 and int(rates.group(2)) > 0, text
    started = re.search(r"Démarrage du serveur : ([\d.]+) s", text)
    assert started and f"démarré en {started.group(1)} s" in text_of(lesson, "l7-c02")


def test_what_delete_vacuum_vacuum_full_the_wal_and_a_backup_keep(lesson):
    delete = text_of(lesson, "l7-c21")
    before, after = counts(delete, "avant"), counts(delete, "après DELETE")
    assert before["Alice"] > 0 and before["témoin"] > 0
    assert after["Alice"] > 0 and after["témoin"] > 0  # dead tuples, found with the control
    vacuum = text_of(lesson, "l7-c24")
    assert "SQL voit 0 événement d'Alice ; le témoin en a" in vacuum
    assert "inchangé : True" in vacuum  # plain VACUUM keeps the relation's file
    full = counts(vacuum, "après VACUUM FULL")
    assert full["Alice"] == 0 and full["témoin"] > 0
    assert "l'ancien existe encore : False" in vacuum
    old = re.search(r"\(fichier (\S+) inchangé", vacuum).group(1)
    new = re.search(r"nouveau fichier (\S+) ;", vacuum).group(1)
    assert old != new
    kept = text_of(lesson, "l7-c27")
    wal = re.search(r"« Martin » s'y lit (\d+) fois, « Lemercier » (\d+) fois", kept)
    assert wal and int(wal.group(1)) > 0 and int(wal.group(2)) > 0, kept
    backup = re.search(r"suppression : « Martin » (\d+) fois, « Lemercier » (\d+) fois", kept)
    assert backup and int(backup.group(1)) > 0 and int(backup.group(2)) > 0, kept


def test_the_exercise_passes_its_check_and_the_lesson_stops_and_tidies(lesson):
    assert "Bravo : Chloé est oubliée des tables" in text_of(lesson, "l7-c33")
    end = text_of(lesson, "l7-c36")
    assert "Serveur arrêté : True" in end and "Restent : []" in end
    left = processes_matching(
        lambda _uid, cmd: "lecon07-pg" in cmd or "course.tuteur.instance" in cmd
    )
    assert left == [], left


@pytest.mark.slow
def test_without_postgresql_one_sentence_then_clean_skips(
    tmp_path: Path, run_notebook, monkeypatch
):
    monkeypatch.setenv("COURS_PG_BIN", str(tmp_path / "pas-de-postgres"))
    source = REPO / "solutions" / "lecons" / NAME
    nb, _seconds = run_notebook(source, tmp_path)  # any error fails the run
    said = text_of(nb, "l7-c02").strip()
    assert said.startswith("PostgreSQL est introuvable : installez le paquet Python")
    assert said.count(".") == 1 and said.endswith("sauf les quiz et le bilan."), said
    for cell in nb.cells:
        if cell.cell_type != "code" or cell.id in ("l7-c01", "l7-c02"):
            continue
        kept = "Quiz(" in cell.source or "bilan(" in cell.source
        assert bool(cell.outputs) == kept, cell.id
    assert "Bilan :" in text_of(nb, nb.cells[-1].id)
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert written == [], "a skipped lesson writes no file"
