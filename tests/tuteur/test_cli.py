"""`python -m course.tuteur`: a real terminal (pexpect pseudo-terminal) and piped input."""

from __future__ import annotations

import json
import re
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pexpect
import pytest

PROMPT = "alice> "
INTERRUPTED = "Interrompu (Ctrl-C)"


def _as_a_terminal_starts_it() -> None:
    """Ctrl-C at its default and unblocked, as in a login shell, whatever the test worker
    inherited (exec keeps an ignored or blocked SIGINT)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def _signal_state(pid: int) -> str:
    """What the kernel says of the process and each of its threads: its signal masks and
    where each thread waits, for the message of a Ctrl-C that got no answer."""
    proc = Path(f"/proc/{pid}")
    lines = []
    try:
        status = (proc / "status").read_text().splitlines()
        lines += [line for line in status if line.startswith(("State", "Sig", "Shd"))]
        for task in sorted((proc / "task").iterdir()):
            name = (task / "comm").read_text().strip()
            wchan = (task / "wchan").read_text().strip()
            masks = [
                line
                for line in (task / "status").read_text().splitlines()
                if line.startswith(("SigPnd", "SigBlk"))
            ]
            lines.append(f"thread {task.name} {name} waits in {wchan}: {masks}")
    except OSError as exc:
        lines.append(f"/proc unreadable: {exc}")
    return "\n".join(lines)


def _expect_interrupted(child: pexpect.spawn, text: str = INTERRUPTED) -> None:
    try:
        child.expect_exact(text, timeout=30)
    except pexpect.TIMEOUT:
        said = (child.before or "")[-300:]
        pytest.fail(f"no answer to Ctrl-C within 30 s after {said!r}:\n{_signal_state(child.pid)}")


@pytest.fixture
def spawn_tutor(python: str, cli_env: dict[str, str], tmp_path: Path) -> Iterator[Any]:
    """Start the tutor in a real pseudo-terminal; every child is closed by its pid at the end."""
    children: list[pexpect.spawn] = []

    def spawn(*args: str) -> pexpect.spawn:
        child = pexpect.spawn(
            python,
            ["-m", "course.tuteur", *args],
            env=cli_env,
            cwd=str(tmp_path),
            encoding="utf-8",
            timeout=60,
            dimensions=(40, 200),
            preexec_fn=_as_a_terminal_starts_it,
        )
        children.append(child)
        return child

    try:
        yield spawn
    finally:
        for child in children:
            if child.isalive():
                child.close(force=True)


def _run(python: str, env: dict[str, str], cwd: Path, *args: str, stdin: str = "") -> Any:
    return subprocess.run(
        [python, "-m", "course.tuteur", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=cwd,
    )


def _finish(child: pexpect.spawn) -> int:
    child.expect(pexpect.EOF)
    child.close()
    return child.exitstatus if child.exitstatus is not None else 128 + child.signalstatus


def test_terminal_session_then_reprendre_then_ctrl_c(
    spawn_tutor: Any, sqlite_db_path: Path, read_db: Any
) -> None:
    child = spawn_tutor("--user", "alice", "--db", str(sqlite_db_path))
    child.expect(r"Nouvelle session (\S+) pour alice\.")
    session_id = child.match.group(1)
    child.expect_exact(PROMPT)
    child.sendline("Bonjour")
    child.expect_exact("Quel est ton niveau, de 1 (débutant) à 5 (expert) ?")
    child.expect_exact(PROMPT)
    child.sendline("")  # an empty answer is refused, not sent
    child.expect_exact("Réponse vide")
    child.expect_exact(PROMPT)
    child.sendline("3")
    child.expect_exact("[outil] fixer_niveau(niveau=3)")
    child.expect_exact("Question (niveau 3, compréhensions de liste)")
    child.expect_exact(PROMPT)
    child.sendline("au revoir")
    child.expect_exact("À bientôt, Alice ! Bilan : niveau 3 (pas encore de réponse)")
    assert _finish(child) == 0
    assert read_db(sqlite_db_path)["counts"] == {session_id: 8}

    again = spawn_tutor("--user", "alice", "--db", str(sqlite_db_path), "--reprendre")
    again.expect_exact(f"Reprise de la session {session_id}")
    again.expect_exact("tuteur> À bientôt, Alice !")  # where the learner left off
    again.expect_exact(PROMPT)
    again.sendline("Bonjour")
    again.expect_exact("Bon retour, Alice ! Tu es au niveau 3")
    again.expect_exact(PROMPT)
    again.sendintr()  # Ctrl-C at the prompt
    _expect_interrupted(again, "Interrompu (Ctrl-C) : ce qui était déjà dit est enregistré")
    assert _finish(again) == 130
    db = read_db(sqlite_db_path)
    assert db["counts"] == {session_id: 10} and len(db["sessions"]) == 1


def test_ctrl_c_and_end_of_input_keep_every_stored_event(
    spawn_tutor: Any, sqlite_db_path: Path, read_db: Any
) -> None:
    child = spawn_tutor("--user", "alice", "--db", str(sqlite_db_path))
    for text in ("Bonjour", "3", "[0, 2, 4]"):
        child.expect_exact(PROMPT)
        child.sendline(text)
    child.expect_exact("Bravo, c'est juste !")
    child.expect_exact(PROMPT)
    child.sendintr()
    _expect_interrupted(child)
    assert _finish(child) == 130
    (sid,) = read_db(sqlite_db_path)["counts"]
    assert read_db(sqlite_db_path)["counts"] == {sid: 10}
    assert "serie" in read_db(sqlite_db_path)["user_states"][0][2]

    eof = spawn_tutor("--user", "alice", "--db", str(sqlite_db_path), "--reprendre")
    eof.expect_exact(PROMPT)
    eof.sendline("with")  # answers the question left pending before Ctrl-C
    eof.expect_exact("Tu passes au niveau 4 !")
    eof.expect_exact(PROMPT)
    eof.sendeof()  # Ctrl-D
    eof.expect_exact("Fin de l'entrée : session")
    assert _finish(eof) == 0
    assert read_db(sqlite_db_path)["counts"] == {sid: 14}


def test_piped_input_and_default_database(
    python: str, cli_env: dict[str, str], tmp_path: Path, read_db: Any
) -> None:
    run = _run(
        python, cli_env, tmp_path, "--user", "alice", stdin="Bonjour\n\n3\nwith\nau revoir\n"
    )
    assert run.returncode == 0, run.stderr
    assert "Réponse vide" in run.stdout
    assert "alice> 3\n  [outil] fixer_niveau(niveau=3)" in run.stdout  # piped lines are echoed
    assert "Ce n'est pas ça." in run.stdout
    assert list(read_db(tmp_path / "tuteur.db")["counts"].values()) == [12]  # default: tuteur.db
    other = tmp_path / "ailleurs.db"
    env = dict(cli_env, TUTEUR_DB=str(other))
    piped_eof = _run(python, env, tmp_path, "--user", "bob", stdin="Bonjour\n")
    assert piped_eof.returncode == 0 and "Fin de l'entrée" in piped_eof.stdout
    assert list(read_db(other)["counts"].values()) == [2]  # TUTEUR_DB wins over tuteur.db


def test_unknown_learner_with_reprendre_gets_a_new_session(
    python: str, cli_env: dict[str, str], sqlite_db_path: Path
) -> None:
    run = _run(
        python,
        cli_env,
        sqlite_db_path.parent,
        "--user",
        "zoe",
        "--reprendre",
        "--db",
        str(sqlite_db_path),
        stdin="Bonjour\n",
    )
    assert run.returncode == 0, run.stderr
    assert "Aucune session précédente pour « zoe » : je commence une nouvelle session." in (
        run.stdout
    )
    assert re.search(r"Nouvelle session \S+ pour zoe\.", run.stdout)


def test_bad_database_paths_are_refused_and_left_alone(
    python: str, cli_env: dict[str, str], tmp_path: Path
) -> None:
    missing = tmp_path / "pas-de-dossier" / "tuteur.db"
    run = _run(
        python, cli_env, tmp_path, "--user", "alice", "--db", str(missing), stdin="Bonjour\n"
    )
    assert run.returncode == 1 and "n'existe pas" in run.stderr
    assert not missing.parent.exists()
    notes = tmp_path / "notes.txt"
    notes.write_bytes(b"mes notes de cours\n")
    run = _run(python, cli_env, tmp_path, "--user", "alice", "--db", str(notes), stdin="Bonjour\n")
    assert run.returncode == 1 and "n'est pas une base SQLite" in run.stderr
    assert notes.read_bytes() == b"mes notes de cours\n"
    run = _run(python, cli_env, tmp_path, "--user", "alice", "--db", str(tmp_path))
    assert run.returncode == 1 and "est un dossier" in run.stderr
    demo = _run(python, cli_env, tmp_path, "demo", "--db", str(notes))
    assert demo.returncode == 1 and notes.read_bytes() == b"mes notes de cours\n"


def test_foreign_sqlite_file_gets_a_clear_error(
    python: str, cli_env: dict[str, str], tmp_path: Path
) -> None:
    import sqlite3

    foreign = tmp_path / "autre.db"
    con = sqlite3.connect(foreign)
    con.execute("CREATE TABLE sessions (x INTEGER)")
    con.execute("INSERT INTO sessions VALUES (1)")
    con.commit()
    con.close()
    run = _run(
        python, cli_env, tmp_path, "--user", "alice", "--db", str(foreign), stdin="Bonjour\n"
    )
    assert run.returncode == 1 and run.stderr.startswith("Erreur avec la base")
    assert "Traceback" not in run.stderr
    con = sqlite3.connect(foreign)
    assert con.execute("SELECT x FROM sessions").fetchall() == [(1,)]
    con.close()


def test_usage_errors_are_in_french(python: str, cli_env: dict[str, str], tmp_path: Path) -> None:
    run = _run(python, cli_env, tmp_path)
    assert run.returncode == 2 and "Erreur : indiquez l'élève avec --user NOM" in run.stderr
    run = _run(python, cli_env, tmp_path, "--user", "  ")
    assert run.returncode == 2 and "--user" in run.stderr
    run = _run(python, cli_env, tmp_path, "--usr", "alice")  # argparse's own error, translated
    assert run.returncode == 2 and "Erreur : argument(s) inconnu(s) : --usr" in run.stderr
    assert not (tmp_path / "tuteur.db").exists()
    shown = _run(python, cli_env, tmp_path, "--help")  # argparse's help, in French too
    assert shown.returncode == 0 and shown.stdout.startswith("usage : python -m course.tuteur")
    assert "options :" in shown.stdout and "-h, --help    afficher cette aide" in shown.stdout
    assert "show this help" not in shown.stdout and "usage:" not in shown.stdout


def test_help_shows_both_ways_to_run_the_tutor(
    python: str, cli_env: dict[str, str], tmp_path: Path
) -> None:
    """--help names the `demo` subcommand the README gives, not only the session with --user;
    a usage error shows both lines too, and `demo --help` its own options."""
    prog = "python -m course.tuteur"
    usage = (
        f"usage\u00a0: {prog} [-h] --user NOM [--reprendre] [--db FICHIER]\n"
        f"        {prog} demo [-h] [--db FICHIER]\n"
    )
    shown = _run(python, {**cli_env, "COLUMNS": "200"}, tmp_path, "--help")
    assert shown.returncode == 0 and shown.stdout.startswith(usage)
    assert shown.stdout.endswith(
        "Sous-commande\u00a0: «\u00a0demo\u00a0» rejoue les deux sessions de démonstration "
        f"d'alice dans la base ({prog} demo --help pour ses options).\n"
    )
    refused = _run(python, cli_env, tmp_path)
    assert refused.returncode == 2 and refused.stderr.startswith(usage)
    demo_help = _run(python, cli_env, tmp_path, "demo", "--help")
    assert demo_help.returncode == 0
    assert demo_help.stdout.startswith(f"usage\u00a0: {prog} demo [-h] [--db FICHIER]\n")
    assert "--db FICHIER  fichier SQLite" in demo_help.stdout
    assert not (tmp_path / "tuteur.db").exists()


def test_non_utf8_input_line_is_skipped(
    python: str, cli_env: dict[str, str], sqlite_db_path: Path, read_db: Any
) -> None:
    run = subprocess.run(
        [python, "-m", "course.tuteur", "--user", "alice", "--db", str(sqlite_db_path)],
        input=b"Bonjour\n\xff\xfe\n3\n",
        capture_output=True,
        timeout=120,
        env=cli_env,
    )
    assert run.returncode == 0, run.stderr.decode()
    assert "Entrée illisible (pas en UTF-8) : ligne ignorée." in run.stderr.decode()
    assert list(read_db(sqlite_db_path)["counts"].values()) == [6]  # Bonjour, then 3


def test_ctrl_c_during_a_turn_leaves_a_consistent_prefix(
    spawn_tutor: Any, sqlite_db_path: Path, read_db: Any
) -> None:
    """Ctrl-C right after sending an answer: whatever was stored is a prefix of the turn."""
    child = spawn_tutor("--user", "alice", "--db", str(sqlite_db_path))
    child.expect_exact(PROMPT)
    child.sendline("Bonjour")
    child.expect_exact(PROMPT)
    child.sendline("3")
    child.sendintr()  # lands during the turn or at the next prompt
    _expect_interrupted(child)
    assert _finish(child) == 130
    import sqlite3

    con = sqlite3.connect(sqlite_db_path)
    assert con.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    con.close()
    kinds = []
    for _, data in read_db(sqlite_db_path)["events"]:
        part = json.loads(data)["content"]["parts"][0]
        kinds.append(
            "call"
            if "function_call" in part
            else "response"
            if "function_response" in part
            else "text"
        )
    full = ["text", "text", "text", "call", "response", "text"]
    assert kinds == full[: len(kinds)] and len(kinds) >= 2
