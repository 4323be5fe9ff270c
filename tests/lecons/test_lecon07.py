"""Lesson 7 (issue 23): three tutor instances behind a balancer, a shared PostgreSQL through ADK
2.10's DatabaseSessionService, and what forgetting a learner leaves on that server.

Its claims are read from the run that ``executed_lessons`` makes (a real server, three real
processes); a second run without PostgreSQL shows the one French sentence and clean skips; a run
without greenlet (SQLAlchemy's asyncio engine cannot start) shows the instances' real cause, in
French, before anything else; a run whose kernel is killed mid-way, and one stopped by an
error, leave no file with a learner's name (issue 31). The killed run first takes the learner's
normal detours (the set-up run again, an Interrupt, the exercise's check run twice, a second
notebook of the lesson in the same folder), each of which broke lesson 7 before.
"""

from __future__ import annotations

import os
import re
import signal
import time
from pathlib import Path

import nbformat
import psutil
import pytest
from helpers import REPO, load_factor, network_free_env, processes_left
from in_order import cells_in_order
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError
from notebook_text import text_of

from course.postgres import dossier_cluster

NAME = "07_partager_la_memoire.ipynb"
SOURCE = REPO / "solutions" / "lecons" / NAME
NBSP = "\u00a0"
# the learners' surnames the lesson writes: Alice's into every file it makes, Bob's (the
# control of its second part) into the server's
NAMES = (b"Martin", b"Lemercier")


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
    # French numbers and typography: « 5,2 s », a non-breaking space before « ; »
    raw = "".join(
        o.get("text", "") for o in next(c for c in lesson.cells if c.id == "l7-c05").outputs
    )
    assert re.match(rf"Instances prêtes en \d+,\d{NBSP}s, pid{NBSP}: \[", raw), raw
    assert f"]{NBSP}; ce notebook{NBSP}: {kernel}" in raw, raw
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
    assert "En plus sur PostgreSQL        : ['adk_internal_metadata']" in text
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
    # every figure a learner reads has a decimal comma (« 0,8 s », « ×1,9 »), as the TP's
    ratios = re.search(
        r"PostgreSQL / SQLite d'ADK : (\d+,\d) ; PostgreSQL / SQLite du cours : (\d+,\d)$",
        text,
        re.M,
    )
    assert ratios, text
    assert float(ratios.group(1).replace(",", ".")) > 0 < float(ratios.group(2).replace(",", "."))
    rates = re.search(
        r"une instance (\d+) tours/s, trois instances (\d+) tours/s \(×\d+,\d\)", text
    )
    assert rates and int(rates.group(1)) > 0 and int(rates.group(2)) > 0, text
    started = re.search(r"Démarrage du serveur : (\d+,\d) s", text)
    assert started and f"démarré en {started.group(1)} s" in text_of(lesson, "l7-c02")
    assert not re.search(r"\d\.\d", text + text_of(lesson, "l7-c02") + text_of(lesson, "l7-c05"))


def test_what_delete_vacuum_vacuum_full_the_wal_and_a_backup_keep(lesson):
    delete = text_of(lesson, "l7-c21")
    before, after = counts(delete, "avant"), counts(delete, "après DELETE")
    assert before["Alice"] > 0 and before["témoin"] > 0
    assert after["Alice"] > 0 and after["témoin"] > 0  # dead tuples, found with the control
    vacuum = text_of(lesson, "l7-c24")
    assert "SQL voit 0 événement d'Alice ; le témoin en a" in vacuum
    assert re.search(r"\(fichier \S+ inchangé\)$", vacuum, re.M), vacuum  # VACUUM keeps it
    full = counts(vacuum, "après VACUUM FULL")
    assert full["Alice"] == 0 and full["témoin"] > 0
    assert re.search(r"\(nouveau fichier \S+ ; l'ancien a été supprimé\)$", vacuum, re.M), vacuum
    assert "True" not in vacuum and "False" not in vacuum, vacuum
    old = re.search(r"\(fichier (\S+) inchangé", vacuum).group(1)
    new = re.search(r"nouveau fichier (\S+) ;", vacuum).group(1)
    assert old != new
    kept = text_of(lesson, "l7-c27")
    wal = re.search(r"« Martin » s'y lit (\d+) fois, « Lemercier » (\d+) fois", kept)
    assert wal and int(wal.group(1)) > 0 and int(wal.group(2)) > 0, kept
    backup = re.search(r"suppression : « Martin » (\d+) fois, « Lemercier » (\d+) fois", kept)
    assert backup and int(backup.group(1)) > 0 and int(backup.group(2)) > 0, kept


def test_the_exercise_passes_its_check_and_the_lesson_stops_and_tidies(lesson):
    said = text_of(lesson, "l7-c33")
    assert "Bravo : la conversation de Chloé est effacée des tables ; sa seconde" in said
    end = text_of(lesson, "l7-c36")
    assert end == "Serveur arrêté : oui\nRestent : aucun fichier\n", end
    left = processes_left(lambda _uid, cmd: "lecon07-pg" in cmd or "course.tuteur.instance" in cmd)
    assert left == [], left


def marked(cell) -> bool:
    """A cell the lesson marks as needing the server (its first line)."""
    return cell.cell_type == "code" and cell.source.startswith("# demande le serveur PostgreSQL\n")


SKIP_SAID = "Cellule passée : elle demande le serveur PostgreSQL, indisponible"
# what a learner adds while the server is missing: their own cells, which must run
LEARNER_CELLS = (
    'from course.hints import indice\n\nindice(1, "oublier_conversation")',
    # the marker further down is a note, not the first line: the cell runs, as said
    'print("bonjour", 2 + 2)\n# demande le serveur PostgreSQL ? Non, cette cellule s\'en passe.',
)


def with_learner_cells(nb: nbformat.NotebookNode, after: str) -> list[str]:
    """Inserts LEARNER_CELLS after the cell ``after``; returns their ids."""
    at = next(i for i, c in enumerate(nb.cells) if c.id == after) + 1
    cells = [nbformat.v4.new_code_cell(code) for code in LEARNER_CELLS]
    nb.cells[at:at] = cells
    return [c.id for c in cells]


def assert_section_1_and_learner_cells_ran(nb, learner: list[str]) -> None:
    """The part that needs no server ran: the three instances, each with its SQLite file (the
    second and third do not know Alice's session), and the learner's own cells."""
    pids = instance_pids(text_of(nb, "l7-c05"))
    assert len(set(pids)) == 3, text_of(nb, "l7-c05")
    control = turns(text_of(nb, "l7-c07"))
    assert [(i, pid) for i, pid, _ in control] == list(zip((1, 2, 3), pids, strict=True))
    assert control[0][2].startswith("Bonjour Alice")
    assert [said for _, _, said in control[1:]] == ["session inconnue"] * 2
    hint, hello = (text_of(nb, cell) for cell in learner)
    assert "Indice 1/3" in hint and "oublier_conversation" in hint, hint
    assert hello == "bonjour 4\n", hello


def assert_only_marked_cells_skipped(nb, after: str) -> None:
    """Every code cell after ``after``: a marked one says it was skipped, any other ran."""
    code = [c for c in nb.cells if c.cell_type == "code"]
    code = code[code.index(next(c for c in code if c.id == after)) + 1 :]
    assert any(map(marked, code)) and not all(map(marked, code))  # both kinds are there
    for cell in code:
        said = text_of(nb, cell.id)
        if marked(cell):
            assert said.startswith(SKIP_SAID) and said.count("\n") == 1, (cell.id, said)
        else:
            assert SKIP_SAID not in said, (cell.id, said)
            assert cell.outputs or cell.id == "l7-c31", cell.id  # the answer only defines
    assert "Bilan :" in text_of(nb, nb.cells[-1].id)


@pytest.mark.slow
def test_without_postgresql_one_message_then_only_the_server_s_cells_are_skipped(
    tmp_path: Path, run_notebook, monkeypatch
):
    """Without PostgreSQL: one French message (why, what to install, which cells are skipped);
    the cells marked « # demande le serveur PostgreSQL » are skipped, each saying so; section 1
    (one SQLite file per instance), the quizzes, the score and the learner's own cells run."""
    monkeypatch.setenv("COURS_PG_BIN", str(tmp_path / "pas-de-postgres"))
    nb = nbformat.read(SOURCE, as_version=4)
    learner = with_learner_cells(nb, "l7-c05")
    source = tmp_path / "source" / NAME
    source.parent.mkdir()
    nbformat.write(nb, source)
    workdir = tmp_path / "lecon"
    workdir.mkdir()
    nb, _seconds = run_notebook(source, workdir, timeout=120)  # any error fails the run
    said = text_of(nb, "l7-c02").strip()
    assert said.startswith("PostgreSQL est introuvable : installez le paquet Python"), said
    assert "les cellules qui commencent par « # demande le serveur PostgreSQL » sont passées" in (
        said
    )
    assert "la section" not in said or "SQLite" in said
    assert "vos propres cellules" in said and said.count("\n") == 1, said
    assert_section_1_and_learner_cells_ran(nb, learner)
    assert_only_marked_cells_skipped(nb, "l7-c02")
    end = text_of(nb, "l7-c36")
    assert end == "Restent : aucun fichier\n", end  # no server to say it stopped
    assert [p for p in workdir.rglob("*")] == [], "the lesson erased what section 1 wrote"
    parent = private_parent(workdir)
    assert parent is None or not parent.exists(), f"no server, yet {parent} was made"


# -- issue 31: a lesson that fails says why, and leaves no learner's name behind ---------------


def lesson_files(workdir: Path) -> dict[str, Path]:
    """The three places lesson 7 writes learners' names: the instances' SQLite files, the
    backup, the cluster (beside the notebook, or under the temporary folder as root)."""
    cluster = dossier_cluster("lecon07-pg", workdir)
    return {
        "instances": workdir / "lecon07-instances",
        "sauvegarde": workdir / "lecon07-sauvegarde.sql",
        "cluster": cluster,
    }


def private_parent(workdir: Path) -> Path | None:
    """As root, the cluster's private folder in the temporary folder (cours-pg-<hash>)."""
    cluster = lesson_files(workdir)["cluster"]
    return cluster.parent if cluster.parent != workdir else None


def names_in(path: Path) -> int:
    """How many times a learner's surname is in the file, or in the files under the folder."""
    files = [path] if path.is_file() else [p for p in path.rglob("*") if p.is_file()]
    found = 0
    for file in files:
        try:
            data = file.read_bytes()
        except OSError:  # a socket, a file removed meanwhile
            continue
        found += sum(data.count(name) for name in NAMES)
    return found


def wait_until_gone(paths: list[Path], seconds: float) -> list[Path]:
    deadline = time.monotonic() + seconds * load_factor()
    while time.monotonic() < deadline:
        left = [p for p in paths if p.exists()]
        if not left:
            return []
        time.sleep(0.2)
    return [p for p in paths if p.exists()]


def lesson_processes(workdir: Path, cluster: Path, seconds: float = 30) -> list[str]:
    """This run's instances, watchdogs and server still alive after ``seconds`` (those
    working in ``workdir`` or naming the cluster: other runs of lesson 7 are not this one's)."""

    def ours() -> list[str]:
        found = []
        for proc in psutil.process_iter():
            try:
                cwd, cmd = proc.cwd(), " ".join(proc.cmdline())
            except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
                continue
            if proc.pid != os.getpid() and (cwd.startswith(str(workdir)) or str(cluster) in cmd):
                found.append(f"{proc.pid} {cmd[:120]}")
        return found

    deadline = time.monotonic() + seconds * load_factor()
    while (left := ours()) and time.monotonic() < deadline:
        time.sleep(0.2)
    return left


def client_for(workdir: Path) -> NotebookClient:
    nb = nbformat.read(SOURCE, as_version=4)
    return NotebookClient(
        nb, timeout=240, kernel_name="python3", resources={"metadata": {"path": workdir}}
    )


def run_until(client: NotebookClient, last: str, start: str | None = None) -> None:
    cells = list(enumerate(client.nb.cells))
    if start is not None:
        cells = cells[next(i for i, c in cells if c.id == start) :]
    for index, cell in cells:
        client.execute_cell(cell, index)
        if cell.id == last:
            return
    raise AssertionError(f"no cell {last}")


def run_cell(client: NotebookClient, cell: str, *, fails: bool = False) -> str:
    """Runs the lesson's cell of id ``cell`` (or this code) in the client's kernel; returns
    what it printed, or, if it ``fails`` as expected, its error (its class: its message)."""
    found = [(i, c) for i, c in enumerate(client.nb.cells) if c.id == cell]
    index, node = found[0] if found else (0, nbformat.v4.new_code_cell(cell))
    try:
        client.execute_cell(node, index)
    except CellExecutionError as err:
        if fails:
            return f"{err.ename}: {err.evalue}".replace(NBSP, " ")
        raise
    assert not fails, f"expected an error from {cell[:80]!r}"
    return "".join(o.get("text", "") for o in node.outputs).replace(NBSP, " ")


def instance_pids(said: str) -> list[int]:
    return [int(p) for p in re.search(r"pid : \[([\d, ]+)\]", said).group(1).split(", ")]


def alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


@pytest.mark.slow
def test_run_again_interrupted_checked_twice_then_killed_leaves_no_file_with_a_learner_name(
    tmp_path: Path,
):
    """The learner's normal path in one kernel: « Exécuter tout » again (the set-up cells
    stop and restart this kernel's own server and instances, in seconds), an Interrupt
    (SIGINT to the kernel's process group, as JupyterLab sends it: the instances live on), the
    exercise's check run twice with a correct answer (it passes both times), a second notebook
    of the lesson in the same folder (refused, erasing nothing); then kill -9 of
    the kernel (no atexit, no lesson cell runs): the watchdog of course.cleanup erases what the
    lesson wrote once the cluster's server has stopped."""
    places = lesson_files(tmp_path)
    client = client_for(tmp_path)
    with client.setup_kernel(env=network_free_env(), cwd=str(tmp_path)):
        start = time.monotonic()
        run_until(client, "l7-c05")
        print(f"set-up run first in {time.monotonic() - start:.1f} s")
        first = instance_pids(text_of(client.nb, "l7-c05"))
        start = time.monotonic()
        again = run_cell(client, "l7-c02") + run_cell(client, "l7-c03")
        ready = run_cell(client, "l7-c05")
        print(f"set-up run again in {time.monotonic() - start:.1f} s")
        assert "Serveur PostgreSQL démarré en" in again and "déjà démarré" not in again, again
        assert "Les trois instances du tuteur l'ont ouverte." in again, again
        pids = instance_pids(ready)
        assert not set(pids) & set(first) and all(map(alive, pids)), (first, pids)
        assert not any(map(alive, first)), "the first run's instances were stopped"
        interrupted = run_cell(
            client,
            "import signal\nos.killpg(os.getpgid(0), signal.SIGINT)\ntime.sleep(60)",
            fails=True,
        )
        assert "KeyboardInterrupt" in interrupted, interrupted  # control: the kernel got it
        time.sleep(1)  # an instance the signal reached takes a moment to end
        assert all(map(alive, pids)), "an Interrupt of the kernel killed the tutor's instances"
        run_until(client, "l7-c21", start="l7-c06")  # the dialogues, by the same instances
        assert {pid for _, pid, _ in turns(text_of(client.nb, "l7-c07"))} == set(pids)
        run_cell(client, "l7-c31")
        for _ in range(2):  # a corrected answer, checked again: it passes every time
            assert "Bravo : la conversation de Chloé est effacée" in run_cell(client, "l7-c33")
        # a second notebook of this lesson in the same folder (a second tab, a copy) is
        # refused before it erases anything of the first's
        second = client_for(tmp_path)
        with second.setup_kernel(env=network_free_env(), cwd=str(tmp_path)):
            refused = run_cell(second, "l7-c02", fails=True)
            # learner's walk, stop 57: its next cell said « name 'pg' is not defined » and
            # « Les autres s'exécutent », and they failed one by one
            after = run_cell(second, "l7-c03", fails=True)
        assert "PremiereCelluleArretee" in after and "relancez-la" in after, after
        assert "Les autres s'exécutent" not in after and "name 'pg'" not in after, after
        kernel = client.km.provisioner.pid
        assert f"déjà démarré par un autre processus (pid {kernel})" in refused, refused
        assert "arrêtez son noyau, puis relancez cette cellule" in refused  # no other folder
        (cell,) = [c for c in second.nb.cells if c.id == "l7-c02"]
        shown = [o for o in cell.outputs if o.get("output_type") == "error"]
        assert [len(o["traceback"]) for o in shown] == [1], shown  # its French line alone
        run_cell(client, "l7-c07")  # the first goes on: its instances' files are there
        # control: the names are there, in each of the three places, while the lesson runs
        found = {place: names_in(path) for place, path in places.items()}
        assert all(found.values()), found
        os.kill(kernel, signal.SIGKILL)
    parent = [p for p in [private_parent(tmp_path)] if p is not None]
    left = wait_until_gone([*places.values(), *parent], 90)
    assert left == [], f"left after the kernel was killed: {left}"
    assert names_in(tmp_path) == 0 and names_in(places["cluster"].parent) == 0
    assert lesson_processes(tmp_path, places["cluster"]) == []


def run_in_order(order: list[str], failing: list[int], tmp_path: Path, run_notebook):
    """Runs the lesson's cells of ids ``order`` in one kernel, as a learner clicks them: only
    the cells at the indexes ``failing`` fail. Returns their errors and what each cell
    printed."""
    nb, errors = cells_in_order(
        SOURCE, order, tmp_path, run_notebook, allow_errors=True, timeout=240
    )
    shown = list(zip(order, errors, strict=True))
    assert [i for i, e in enumerate(errors) if e] == failing, shown
    said = ["".join(o.get("text", "") for o in c.outputs).replace(NBSP, " ") for c in nb.cells]
    return [errors[i][0] for i in failing], said


@pytest.mark.slow
def test_cells_run_out_of_order_or_again_say_what_to_run(tmp_path: Path, run_notebook):
    """Learner's walk, stop 61: a cell run before the one that defines its names stopped on
    Python's English « NameError: name 'dialogue' is not defined »; the base's cell run twice
    met « createdb: database "tuteur" already exists », which passer_sans_postgres took for a
    missing PostgreSQL: every later cell said the server was unavailable while it ran. The
    first now adds a French line saying what to run; the second keeps the base."""
    from course.readable_error import missing_name

    order = ["l7-c02", "l7-c09", "l7-c03", "l7-c03", "l7-c05", "l7-c09", "l7-c36"]
    (error,), said = run_in_order(order, [1], tmp_path, run_notebook)
    assert error.ename == "NameError", error
    said_after = f"En français{NBSP}: {missing_name('dialogue', typed=True)}"
    assert error.traceback[-1] == said_after, error
    assert "Vérifiez son orthographe" in said_after  # a misspelt name is a cause too
    assert said[2] == said[3], said[3]  # run again, the same: the base kept, opened again
    assert "Les trois instances du tuteur l'ont ouverte." in said[3], said[3]
    shared = turns(said[5])
    assert [i for i, _, _ in shared[:3]] == [1, 2, 3] and "niveau 3" in shared[1][2], said[5]
    assert said[6] == "Serveur arrêté : oui\nRestent : aucun fichier\n", said[6]


@pytest.mark.slow
def test_the_delete_cell_run_again_keeps_the_backup_that_holds_alice(tmp_path: Path, run_notebook):
    """Learner's walk, stop 61: section 4's DELETE cell run a second time made a new backup,
    after Alice's sessions were gone: « avant : {'Alice': 0 …} », then « Sauvegarde d'avant la
    suppression : « Martin » 0 fois », against the text (a backup keeps the learner). Run
    again, it stops before the backup and says which cell brings Alice back; once run, the
    backup holds her again."""
    order = ["l7-c02", "l7-c03", "l7-c05", "l7-c09", "l7-c21", "l7-c21", "l7-c09", "l7-c21"]
    (error,), said = run_in_order([*order, "l7-c27", "l7-c36"], [5], tmp_path, run_notebook)
    assert error.ename == "LookupError", error
    assert error.evalue.startswith(f"cette cellule a déjà supprimé les sessions d'Alice{NBSP}:")
    assert "Sauvegarde :" not in said[5], said[5]  # stopped before the backup
    for i in (4, 7):  # the first run, and the run once Alice is back
        assert counts(said[i], "avant")["Alice"] > 0, said[i]
    backup = re.search(r"suppression : « Martin » (\d+) fois", said[8])
    assert backup and int(backup.group(1)) > 0, said[8]
    assert said[9] == "Serveur arrêté : oui\nRestent : aucun fichier\n", said[9]


@pytest.mark.slow
def test_a_later_cell_run_first_says_which_cell_to_run(tmp_path: Path, run_notebook):
    """Learner's walk, stop 61: section 2's cell run before section 1's dialogues printed
    « Fichier SQLite d'une instance : [] » and all five tables « En plus sur PostgreSQL », the
    text's claim contradicted with no error (sqlite3.connect had made an empty file); section
    5's cell run before section 4's stopped on Python's English « No such file or directory:
    'lecon07-sauvegarde.sql' ». Each now says, in French, which cell to run first."""
    order = ["l7-c02", "l7-c03", "l7-c14", "l7-c27", "l7-c05", "l7-c07", "l7-c09", "l7-c21"]
    order += ["l7-c14", "l7-c27", "l7-c36"]
    (tables, backup), said = run_in_order(order, [2, 3], tmp_path, run_notebook)
    assert tables.ename == "LookupError", tables
    assert tables.evalue.startswith(f"lecon07-instances/instance1.db n'existe pas encore{NBSP}:")
    assert "Un fichier SQLite par instance" in tables.evalue, tables
    assert backup.ename == "FileNotFoundError", backup
    assert backup.evalue.startswith(f"lecon07-sauvegarde.sql n'existe pas{NBSP}:"), backup
    assert "WAL" not in said[3], said[3]  # stopped before it printed anything
    # the controls: once the cells above have run, the same cells print their claims
    four = "['app_states', 'events', 'sessions', 'user_states']"
    assert f"Fichier SQLite d'une instance : {four}" in said[8], said[8]
    found = re.search(r"suppression : « Martin » (\d+) fois", said[9])
    assert found and int(found.group(1)) > 0, said[9]
    assert said[10] == "Serveur arrêté : oui\nRestent : aucun fichier\n", said[10]


@pytest.mark.slow
def test_after_ranger_going_back_up_says_what_is_true(tmp_path: Path):
    """ranger() (the last cell) stopped the instances and the server and erased the cluster: a
    cell run again above it says so, in French, instead of « vos données sont restées dans le
    dossier » or « au plus un tour par instance à la fois ». As root, the cluster's private
    folder in /tmp (cours-pg-<hash>, 0733) goes with it."""
    parent = private_parent(tmp_path)
    client = client_for(tmp_path)
    with client.setup_kernel(env=network_free_env(), cwd=str(tmp_path)):
        run_until(client, "l7-c05")
        if parent is not None:  # the control: made while the server runs
            assert parent.stat().st_mode & 0o777 == 0o733
        assert "Restent : aucun fichier" in run_cell(client, "l7-c36")  # control: all erased
        if parent is not None:
            assert not parent.exists(), f"ranger() left {parent}"
        tables = run_cell(client, "l7-c14", fails=True)
        assert "ServeurArrete" in tables and "son dossier a été effacé" in tables, tables
        assert "restées" not in tables and "unable to open" not in tables, tables
        said = run_cell(client, "l7-c07", fails=True)
        assert "Les instances du tuteur sont arrêtées" in said, said
        assert "au plus un tour" not in said, said
    assert [p for p in tmp_path.rglob("*")] == []


@pytest.mark.slow
def test_postgresql_found_later_in_the_same_kernel_runs_the_server_s_cells(tmp_path: Path):
    """The set-up cell run without PostgreSQL, then again once it is found (installed, or its
    folder given in COURS_PG_BIN, in the same kernel): the server starts and the cells that
    need it run, instead of each still saying the server is unavailable."""
    client = client_for(tmp_path)
    env = dict(network_free_env(), COURS_PG_BIN=str(tmp_path / "pas-de-postgres"))
    with client.setup_kernel(env=env, cwd=str(tmp_path)):
        said = run_cell(client, "l7-c02")
        assert said.startswith("PostgreSQL est introuvable"), said
        skipped = run_cell(client, "l7-c03")  # the control: skipped while the server is missing
        assert skipped.startswith("Cellule passée : elle demande le serveur PostgreSQL"), skipped
        run_cell(client, "import os\nos.environ.pop('COURS_PG_BIN')")  # PostgreSQL found
        assert "Serveur PostgreSQL démarré en " in run_cell(client, "l7-c02")
        opened = run_cell(client, "l7-c03")
        assert "Les trois instances du tuteur l'ont ouverte." in opened, opened
        assert "Restent : aucun fichier" in run_cell(client, "l7-c36")
    assert [p for p in tmp_path.rglob("*")] == []


@pytest.mark.slow
def test_a_lesson_stopped_by_an_error_leaves_no_file_with_a_learner_name(tmp_path: Path):
    """A cell that fails after the backup; nbclient then shuts the kernel down, as JupyterLab's
    « Arrêter le noyau » does: nothing with a name stays."""
    places = lesson_files(tmp_path)
    client = client_for(tmp_path)
    cells = client.nb.cells
    at = next(i for i, c in enumerate(cells) if c.id == "l7-c21") + 1
    control = (
        "import pathlib\n"
        "print('noms lus :', sum(p.read_bytes().count(b'Martin') for p in "
        "pathlib.Path('lecon07-instances').glob('*.db')), "
        "pathlib.Path('lecon07-sauvegarde.sql').read_bytes().count(b'Martin'))\n"
        "raise RuntimeError('arrêt simulé au milieu de la leçon')"
    )
    cells.insert(at, nbformat.v4.new_code_cell(control))
    with pytest.raises(CellExecutionError, match="arrêt simulé"):
        client.execute(env=network_free_env(), cwd=str(tmp_path))
    said = "".join(o.get("text", "") for o in cells[at].outputs)
    instances, backup = re.search(r"noms lus : (\d+) (\d+)", said).groups()
    assert int(instances) > 0 and int(backup) > 0, said  # control: they were there
    left = wait_until_gone(list(places.values()), 90)
    assert left == [], f"left after the error: {left}"
    assert names_in(tmp_path) == 0
    assert lesson_processes(tmp_path, places["cluster"]) == []


@pytest.mark.slow
def test_without_greenlet_the_instances_real_cause_first_then_clean_skips(tmp_path: Path):
    """SQLAlchemy 2.1's asyncio engine without greenlet (as in requirements/lab.txt before
    issue 31): the setup cell says so in French, names the module, skips the cells that need
    the server (section 1, on SQLite files, and the learner's own cells run), tidies."""
    site = tmp_path / "sans_greenlet"
    site.mkdir()
    blocker = REPO / "tests" / "lecons" / "sans_reseau" / "sitecustomize.py"
    (site / "sitecustomize.py").write_text(
        "import runpy, sys\n"
        "sys.modules['greenlet'] = None  # import greenlet: ModuleNotFoundError\n"
        f"runpy.run_path({str(blocker)!r})\n",
        encoding="utf-8",
    )
    env = network_free_env()
    env["PYTHONPATH"] = os.pathsep.join((str(site), env["PYTHONPATH"]))
    workdir = tmp_path / "lecon"
    workdir.mkdir()
    places = lesson_files(workdir)
    client = client_for(workdir)
    learner = with_learner_cells(client.nb, "l7-c05")
    client.execute(env=env, cwd=str(workdir))  # any error fails the run
    nb = client.nb
    assert "Serveur PostgreSQL démarré" in text_of(nb, "l7-c02")  # control: the server ran
    said = text_of(nb, "l7-c03").strip()
    assert said.startswith("L'instance 1 du tuteur n'a pas pu utiliser la base partagée : "), said
    assert "Il manque le module Python « greenlet »" in said, said
    assert "pip install greenlet" in said and "KeyError" not in said
    assert "sont passées (chacune le dit)" in said, said
    assert_section_1_and_learner_cells_ran(nb, learner)
    assert_only_marked_cells_skipped(nb, "l7-c03")
    end = text_of(nb, "l7-c36")
    assert end == "Serveur arrêté : oui\nRestent : aucun fichier\n", end
    assert [p for p in places.values() if p.exists()] == []
    assert [p for p in workdir.rglob("*")] == []
    assert lesson_processes(workdir, places["cluster"]) == []


# -- issue 34: the graded answer of oublier_partage is nowhere in what a learner reads ---------

OLD_FOLDED_SOLUTION = """<details>
<summary>Solution</summary>

```python
async def oublier_partage(sql, user_id):
    await sql("DELETE FROM sessions WHERE app_name = $1 AND user_id = $2", APP_NAME, user_id)
    await sql("DELETE FROM user_states WHERE app_name = $1 AND user_id = $2", APP_NAME, user_id)
    await sql("VACUUM FULL events, sessions, user_states")
```
</details>"""


def shared_erasure(nb) -> bool:
    """The TP oublier_partage's whole answer in one notebook: DELETE on sessions (the cascade
    takes the events) and on user_states, and a VACUUM FULL (test_sans_corrige's reading of
    code, comments and Markdown)."""
    from test_sans_corrige import DELETE, notebook_texts

    statements = [p for t in notebook_texts(nb) for p in re.split(r";|\n\s*\n", t)]
    tables = {m.group(1).lower() for s in statements if (m := DELETE.match(s)) and m.group(1)}
    full = any(re.match(r"\s*VACUUM\s+FULL\b", s, re.IGNORECASE) for s in statements)
    return {"sessions", "user_states"} <= tables and full


def test_lesson_7_holds_no_answer_of_the_graded_oublier_partage():
    from test_sans_corrige import as_released

    """The lesson's exercise (one conversation, oublier_conversation) differs from the graded
    one (the whole learner): not even the lesson's source, its solution region included, holds
    the TP's answer."""
    student = nbformat.read(REPO / "notebooks" / "lecons" / NAME, as_version=4)
    assert not shared_erasure(student)
    assert not shared_erasure(as_released(SOURCE))
    assert not shared_erasure(nbformat.read(SOURCE, as_version=4))
    # controls: the search finds the answer in the instructor's notebook of the TP, and in the
    # folded « Solution » the lesson had before issue 34
    graded = REPO / "solutions" / "oublier_partage" / "oublier_partage.ipynb"
    assert shared_erasure(nbformat.read(graded, as_version=4))
    folded = nbformat.read(REPO / "notebooks" / "lecons" / NAME, as_version=4)
    folded.cells.append(nbformat.v4.new_markdown_cell(OLD_FOLDED_SOLUTION))
    assert shared_erasure(folded)


def test_lesson_7_code_has_no_escapes_and_ends_without_a_file_number():
    nb = nbformat.read(SOURCE, as_version=4)
    escaped = [c.id for c in nb.cells if c.cell_type == "code" and "\\u00a0" in c.source]
    assert escaped == []
    assert any(NBSP in c.source for c in nb.cells if c.cell_type == "code")  # typography kept
    end = nb.cells[-2].source + nb.cells[-1].source
    assert "page de départ" in end and not re.search(r"\b0[1-9]_\w+\.ipynb", end), end
