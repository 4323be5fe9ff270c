"""Unit tests for course.diagrammes: diagrams built from a real ADK-format SQLite file."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import REPO, network_free_env

from course import diagrammes as d


def test_schema_shows_tables_keys_cascade_and_missing_cascade(adk_format_db: Path):
    diagram = d.schema(adk_format_db)
    src = diagram.source
    assert "\nerDiagram\n" in src
    for table in ("app_states", "user_states", "sessions", "events"):
        assert f"\t{table}{{" in src
    assert "TEXT session_id PK, FK" in src
    assert 'sessions||--o{events : "ON DELETE CASCADE"' in src
    # user_states shares sessions' key but has no foreign key: dotted, no cascade
    assert 'user_states|o..o{sessions : "même clé, sans cascade"' in src
    assert "accTitle: Schéma de tuteur.db" in src and "accDescr: Les 4 tables" in src
    text = diagram.texte
    assert "- sessions → events : clé étrangère (app_name, user_id, session_id)" in text
    assert "ON DELETE CASCADE" in text and "aucune suppression en cascade" in text
    assert diagram.bundle() == {"text/vnd.mermaid": src, "text/plain": text}


def test_sequence_shows_learner_tutor_tools_and_state(adk_format_db: Path):
    diagram = d.sequence(adk_format_db, user_id="alice")
    src = diagram.source
    assert "\nsequenceDiagram\n" in src
    assert "accTitle: Une session de l'élève alice" in src
    assert "accDescr: Les 4 premiers événements de la session s-alice" in src
    assert "\tactor eleve as Élève\n" in src
    assert "\tparticipant tuteur as Tuteur\n" in src
    assert "tuteur->>outil_enregistrer_reponse: enregistrer_reponse(juste=true)" in src
    assert "outil_enregistrer_reponse-->>tuteur: niveau=2" in src
    assert "Note over tuteur: état modifié : user:progression" in src
    assert "tuteur-->>eleve: Bravo ! Vous passez au niveau 2." in src
    # the learner's text cannot break the diagram: no statement separator, comment or tag
    line = next(x for x in src.splitlines() if x.startswith("\televe->>tuteur"))
    message = line.split(": ", 1)[1]
    assert message == "Bonjour #59; je veux réviser #35;python #lt;b#gt;"  # entity codes
    assert "l'élève écrit : Bonjour ; je veux réviser #python <b>" in diagram.texte
    assert "l'élève écrit" in diagram.texte and "l'outil enregistrer_reponse" in diagram.texte


def test_sequence_picks_sessions_and_limits(adk_format_db: Path):
    # without user: the session with the most events (alice's, not bob's empty one)
    assert "s-alice" in d.sequence(adk_format_db).description
    empty = d.sequence(adk_format_db, "s-bob")
    assert "session vide" in empty.source
    short = d.sequence(adk_format_db, "s-alice", limite=2)
    assert "… et 2 événements de plus" in short.source
    assert "Bravo" not in short.source


def test_clear_french_errors(tmp_path: Path, adk_format_db: Path):
    with pytest.raises(d.DiagrammeError, match="Base introuvable"):
        d.schema(tmp_path / "absent.db")
    assert not (tmp_path / "absent.db").exists()  # reading never creates a file
    junk = tmp_path / "pas_une_base.db"
    junk.write_text("ceci n'est pas une base SQLite" * 100)
    with pytest.raises(d.DiagrammeError, match="pas une base SQLite"):
        d.schema(junk)
    empty = tmp_path / "vide.db"
    sqlite3.connect(empty).close()
    empty.write_bytes(b"")
    with pytest.raises(d.DiagrammeError, match="aucune table"):
        d.schema(empty)
    with pytest.raises(d.DiagrammeError, match="Aucune session pour carole"):
        d.sequence(adk_format_db, user_id="carole")
    with pytest.raises(d.DiagrammeError, match="avec l'id 'nope'"):
        d.sequence(adk_format_db, "nope")
    with pytest.raises(d.DiagrammeError, match="limite"):
        d.sequence(adk_format_db, limite=0)
    other = tmp_path / "autre.db"
    sqlite3.connect(other).execute("CREATE TABLE t (x)").connection.close()
    with pytest.raises(d.DiagrammeError, match="format d'une base de sessions"):
        d.sequence(other)


def test_accessibility_lines_go_after_the_keyword():
    src = "---\ntitle: T\n---\nflowchart LR\n  A --> B"
    out = d.with_accessibility(src, "Titre ; ici", "Une phrase #1.")
    assert out.splitlines()[3:6] == [
        "flowchart LR",
        "\taccTitle: Titre , ici",
        "\taccDescr: Une phrase n°1.",
    ]
    with pytest.raises(d.DiagrammeError):
        d.with_accessibility("%% rien", "t", "d")


def test_afficher_displays_exactly_the_raw_bundle(adk_format_db: Path):
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.utils.capture import capture_output

    InteractiveShell.instance()
    diagram = d.schema(adk_format_db)
    with capture_output() as captured:
        d.afficher(diagram)
    assert len(captured.outputs) == 1
    assert captured.outputs[0].data == diagram.bundle()


def test_import_and_build_do_no_network(adk_format_db: Path):
    """Run in a process whose sockets are blocked: mermaid-py must not try to reach mermaid.ink."""
    code = (
        "import socket, sys\n"
        "assert socket.SANS_RESEAU\n"
        "from course import diagrammes as d\n"
        f"d.schema({str(adk_format_db)!r}); d.sequence({str(adk_format_db)!r})\n"
        "try:\n"
        "    socket.create_connection(('example.org', 80), timeout=2)\n"
        "except OSError as exc:\n"
        "    print('bloqué', exc)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        env=network_free_env(),
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    assert "bloqué" in out.stdout and "Réseau bloqué" in out.stdout
    source = (REPO / "course" / "diagrammes.py").read_text()
    assert "Mermaid(" not in source.replace("mermaid.Mermaid(...)", "")
