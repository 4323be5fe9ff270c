"""Compiled code and Python environments in the class folder (learner_places
``_compiled_course_file``, ``_is_environment``): a ``.pyc`` is passed over only as the
compilation of a course file as shipped, one whose source is gone is dead code (deleted with
her when it names her), any other is searched; what pip installed never blocks an erasure, a
teacher's or a classmate's own files beside it are searched."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
from pathlib import Path

import pytest
from erase_scenes import _assert_proved, _copy_class, _dry_run_in_two_gigabytes, _erase, _setup

pytestmark = [pytest.mark.timeout(300)]


def _venv_with_babel(env: Path) -> None:
    """A virtual environment at `env` (``uv venv``) with Babel installed, whose locale data holds
    « ana » as a word. Offline, from uv's cache, as ``make setup`` installed it: pinned with its
    hashes from requirements/lab.txt (uv caches a wheel installed that way under its hashes, so a
    bare ``babel==…`` finds nothing offline on a machine whose cache only `make` filled)."""
    import re
    import subprocess

    from helpers import REPO

    pinned = re.search(
        r"^babel==.*?(?=^\S)", (REPO / "requirements" / "lab.txt").read_text(), re.M | re.S
    )
    assert pinned, "Babel is no longer in requirements/lab.txt"
    requirement = env.parent / "babel-requirement.txt"
    requirement.write_text(pinned.group(0), encoding="utf-8")
    uv = str(REPO / ".venv" / "bin" / "uv")
    subprocess.run([uv, "venv", "-q", str(env)], check=True)
    python = str(env / "bin" / "python")
    install = [uv, "pip", "install", "-q", "--offline", "--no-deps", "--require-hashes"]
    subprocess.run([*install, "--python", python, "-r", str(requirement)], check=True)
    requirement.unlink()


def test_compiled_code_in_a_classmates_folder_is_searched(petite_classe):
    """Lead's read of the content rule: ``__pycache__`` and ``.git`` were skipped everywhere,
    also inside the class's data folders, where a classmate's module compiled during grading
    (autograded/cyr/oublier/__pycache__) may hold the learner's name. Only outside them are
    they the course's or git's. Since review4, only the compiled copy of a course file as
    shipped is passed over (control: course_files.py, whose docstring names « ana »); any
    other ``.pyc`` is searched (test_compiled_code_of_a_teachers_script_she_corrected_is_named)."""
    import py_compile

    from grading.erase_learner import ErasureError

    c = petite_classe
    grader = c["grader"]
    source = grader / "grading" / "privacy" / "course_files.py"
    outside = Path(py_compile.compile(str(source), doraise=True))
    assert b"ana" in outside.read_bytes() and outside.parent.name == "__pycache__"
    inside = grader / "submitted" / "cyr" / "oublier" / "__pycache__" / "aide.cpython-311.pyc"
    inside.parent.mkdir()
    inside.write_bytes(b"\x00\x00ana\x00")
    with pytest.raises(ErasureError, match="aide.cpython-311.pyc") as refused:
        _erase(c, "ana")
    assert outside.name not in str(refused.value)
    inside.unlink()
    assert not _erase(c, "ana").failures


@pytest.mark.slow
def test_a_class_list_the_teacher_keeps_in_a_pycache_folder_is_searched(petite_classe):
    """Review3: every folder named ``__pycache__`` is skipped by name (« compiled code, its
    source is searched »), whatever it holds: a class list naming ana in
    grader/hub/__pycache__/ (or any file there that is not Python's own) gets « Preuve faite »
    while it names her. Control: the same list one folder up is named."""
    from grading.erase_learner import ErasureError

    c = petite_classe
    grader = c["grader"]
    text = "id,nom,courriel\nana,Ana Martin,ana.martin@exemple.fr\n"
    kept = grader / "hub" / "classe.csv"
    kept.write_text(text, encoding="utf-8")
    with pytest.raises(ErasureError, match="classe.csv"):  # control: one folder up, named
        _erase(c, "ana")
    hidden = grader / "hub" / "__pycache__" / "classe.csv"
    hidden.parent.mkdir(exist_ok=True)
    kept.rename(hidden)
    with pytest.raises(ErasureError, match="classe.csv"):
        _erase(c, "ana")
    assert (grader / "submitted" / "ana").is_dir()


@pytest.mark.slow
def test_compiled_code_of_a_teachers_script_she_corrected_is_named(petite_classe):
    """Review4: ``__pycache__/*.pyc`` outside the data folders is skipped (« its source is
    searched »). The teacher's script grader/hub/inscrire.py listed ana's e-mail; Python
    compiled it once (grader/hub/__pycache__/inscrire.cpython-3XX.pyc). The erasure names the
    script; she removes ana's line as told: « Preuve faite », while the compiled copy, never
    recompiled, still holds her e-mail. Control: the script itself is named."""
    import subprocess
    import sys

    from grading.erase_learner import ErasureError

    c = petite_classe
    hub = c["grader"] / "hub"
    script = hub / "inscrire.py"
    script.write_text(
        'ELEVES = ["ana.martin@exemple.fr", "ben.durand@exemple.fr"]\n', encoding="utf-8"
    )
    # what Python does on the first import (py_compile: the tests run without bytecode)
    subprocess.run([sys.executable, "-m", "py_compile", "inscrire.py"], cwd=hub, check=True)
    compiled = list((hub / "__pycache__").glob("inscrire.*.pyc"))
    assert compiled and b"ana.martin@exemple.fr" in compiled[0].read_bytes()
    with pytest.raises(ErasureError, match="inscrire.py"):  # control: the script, named
        _erase(c, "ana")
    script.write_text('ELEVES = ["ben.durand@exemple.fr"]\n', encoding="utf-8")
    assert b"ana.martin@exemple.fr" in compiled[0].read_bytes()  # she is still there
    with pytest.raises(ErasureError, match="inscrire"):
        _erase(c, "ana")


@pytest.mark.slow
def test_a_teachers_virtual_environment_in_grader_never_blocks_the_erasure(petite_classe):
    """Review4: a teacher who keeps her own virtual environment in grader/ (``uv venv
    grader/env``, then the course's tools: here Babel, a dependency of JupyterLab in uv.lock)
    cannot erase « ana »: the scan reads every installed file as hers, finds « ana » as a
    whole word in Babel's locale data (blo.dat, eo.dat…: « ana » glued to a byte that is not
    ASCII), and refuses on files she never wrote and cannot edit. Measured with the course's
    whole .venv copied into grader/: 63 such files, 189 s for one scan (the class's own
    erasure, without the venv, is made in every other test of this module)."""

    from grading.erase_learner import ErasureError

    c = petite_classe
    env = c["grader"] / "env"
    _venv_with_babel(env)
    _assert_proved(c, "ana", "un venv de l'enseignante")
    # what pip installed is left out, not the environment's folder: her class list beside it
    (env / "classe.csv").write_text("ana,Ana Martin,ana.martin@exemple.fr\n", encoding="utf-8")
    with pytest.raises(ErasureError, match="env/classe.csv"):
        _erase(c, "ana")


@pytest.mark.slow
def test_a_teachers_folder_with_a_pyvenv_cfg_is_still_searched(petite_classe):
    """Review5: a folder outside the data folders holding ``pyvenv.cfg`` is skipped whole (« a
    Python environment: what pip installed »). A teacher who made her follow-up folder its own
    environment to run a script there (``cd grader/hub/suivi && python3 -m venv .``, as many
    guides show) keeps her class list beside it (suivi/eleves-2025.csv, naming ana): the whole
    folder is never read and the erasure says « Preuve faite ». Control: the same folder before
    ``python3 -m venv .`` is named."""
    import subprocess
    import sys

    from grading.erase_learner import ErasureError

    c = petite_classe
    suivi = c["grader"] / "hub" / "suivi"
    suivi.mkdir()
    (suivi / "eleves-2025.csv").write_text(
        "id,nom,courriel,tiers-temps\nana,Ana Martin,ana.martin@exemple.fr,oui\n", encoding="utf-8"
    )
    with pytest.raises(ErasureError, match="eleves-2025.csv"):  # control: named
        _erase(c, "ana")
    venv = [sys.executable, "-m", "venv", "--without-pip", "."]
    subprocess.run(venv, cwd=suivi, check=True)
    assert (suivi / "pyvenv.cfg").is_file()
    with pytest.raises(ErasureError, match="eleves-2025.csv"):
        _erase(c, "ana")


@pytest.mark.slow
def test_a_stale_compiled_copy_of_a_course_file_she_restored_is_named(petite_classe):
    """Review5: a ``.pyc`` is passed over when its source, beside it, is a course file as
    shipped; the ``.pyc``'s own bytes are never compared to that source. The teacher let one
    address through the hub's login guard (grader/hub/login_guard.py, « ana.martin@exemple.fr
    », Ana Martin) and the hub compiled it (here ``import login_guard``, as the hub's
    configuration does); when the erasure named the file, she restored the course's version
    (``git checkout``): the source is as shipped, its compiled copy of her edit is not
    (__pycache__/login_guard.cpython-3XX.pyc still holds the address until the hub imports
    it again), and the erasure says « Preuve faite ». Control: with her edit still in the
    source, the compiled copy is named."""
    import os
    import subprocess
    import sys

    from grading.erase_learner import ErasureError
    from helpers import REPO

    c = petite_classe
    hub = c["grader"] / "hub"
    source = hub / "login_guard.py"
    shutil.copy(REPO / "grader" / "hub" / "login_guard.py", source)  # as the course ships it
    shipped = source.read_bytes()
    edit = b'\nEN_ATTENTE = {"ana.martin@exemple.fr"}  # Ana Martin, compte en attente\n'
    source.write_bytes(shipped + edit)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run([sys.executable, "-c", "import login_guard"], cwd=hub, env=env, check=True)
    compiled = next((hub / "__pycache__").glob("login_guard.*.pyc"))
    assert b"ana.martin@exemple.fr" in compiled.read_bytes()
    with pytest.raises(ErasureError, match=re.escape(compiled.name)):  # control: named
        _erase(c, "ana")
    source.write_bytes(shipped)  # what git checkout writes back
    assert b"ana.martin@exemple.fr" in compiled.read_bytes()  # her address, still there
    with pytest.raises(ErasureError, match=re.escape(compiled.name)):
        _erase(c, "ana")


@pytest.mark.slow
def test_a_virtual_environment_a_classmate_handed_in_never_blocks_the_erasure(petite_classe):
    """Review5: review4's venv is skipped outside the data folders only. Ben made his
    environment inside his TP folder (``python -m venv .venv``, as VS Code proposes; nbgrader
    collects it: 30 MB, under its 100 MB per folder), with the course's tools (here Babel, a
    dependency of JupyterLab): the erasure of « ana » is refused on Babel's locale data
    (« ana » in blo.dat, eo.dat…), files nobody of the class wrote. Each file pip installed
    is listed with its SHA-256 in its package's ``RECORD``: a file that matches it is pip's,
    inside a data folder or out (which would also close the ``pyvenv.cfg`` skip to a
    teacher's own files). Control: a file Ben wrote in the same environment naming her is
    named."""

    from grading.privacy.learner_places import scan

    c = petite_classe
    env = c["grader"] / "submitted" / "ben" / "oublier" / ".venv"
    _venv_with_babel(env)
    his = env / "notes-binome.txt"
    his.write_text("binôme : Ana Martin\n", encoding="utf-8")
    found = {f.where for f in scan("ana", _setup(c)).found}
    assert str(his) in found  # control: his own file, named
    his.unlink()
    _assert_proved(c, "ana", "le venv de ben")


@pytest.mark.slow
def test_the_course_s_compiled_code_copied_with_the_course_never_blocks_the_erasure(
    petite_classe,
):
    """Review6: a ``.pyc`` of a course file is passed over only when its header holds its
    source's current time and size (f62fe1b). Copying the course folder without the times
    (``cp -r cours-2025 cours-2026`` for the new year, a ``git checkout`` back and forth, an
    unzip) keeps every ``__pycache__`` whose bytes are exactly the compilation of the
    shipped source, but their header no longer names the source's time: each is searched,
    and the docstring of grader/hub/cgroup_caps.py (« for a user `ana` », the hub imports it
    from there) refuses the erasure of every learner called ana until Python happens to
    compile that module again. Control: compiled in place, it is passed over."""
    import marshal
    import py_compile

    from helpers import REPO

    c = petite_classe
    source = c["grader"] / "hub" / "cgroup_caps.py"
    shutil.copy(REPO / "grader" / "hub" / "cgroup_caps.py", source)  # as the course ships it
    assert re.search(rb"\bana\b", source.read_bytes())  # the course's own example name
    compiled = Path(py_compile.compile(str(source), doraise=True))
    assert not _erase(_copy_class(c), "ana").failures  # control: compiled in place, skipped
    os.utime(source, (source.stat().st_atime, source.stat().st_mtime + 3600))  # cp -r
    code = compile(source.read_bytes(), str(source), "exec")
    assert compiled.read_bytes()[16:] == marshal.dumps(code)  # its compilation, byte for byte
    _assert_proved(c, "ana", "le code compilé du cours")


@pytest.mark.slow
def test_compiled_code_of_a_module_an_update_of_the_course_moved_never_blocks_the_erasure(
    petite_classe,
):
    """Review6: an update of the course that moves or removes a module (1141a1c moved
    ``grading/learner_places.py`` to ``grading/privacy/``; issue 35 moves most of grading/)
    leaves the teacher's ``grading/__pycache__/learner_places.cpython-311.pyc``, compiled when
    she last ran ``make oublier-eleve``: git never removes it and Python never compiles it
    again. Its source is gone, so ``_compiled_course_file`` says « not the course's », and it
    is searched: the old module's docstrings (« ``ana/oublier/oublier.ipynb`` », the course's
    example learner) refuse the erasure of ana, and the teacher is told to delete a file of
    the course. Control: the class before the update erases ana."""
    import py_compile

    from grading.erase_learner import ErasureError

    c = petite_classe
    # a function of the module before 1141a1c, its docstring as the course shipped it
    old = (
        b"def _owned(path: str, sid: str) -> bool:\n"
        b'    """Whether a download member (``/<archive stem>/<member>``) is the learner\'s.\n\n'
        b"    The first folder inside the archive that names a learner of the class (or\n"
        b"    `sid`) decides: an ENT that puts each copy one folder deeper\n"
        b"    (``ana/oublier/oublier.ipynb``,\n"
        b"    ``ana/brouillon/\xe2\x80\xa6``) keeps them Ana's; a file name is never an owner\n"
        b'    (``ben/ana.ipynb`` is Ben\'s)."""\n'
        b"    return path.split('/')[1] == sid\n"
    )
    assert re.search(rb"\bana/oublier\b", old)  # the course's own example, in a docstring
    assert not _erase(_copy_class(c), "ana").failures  # control: « Preuve faite »
    source = c["grader"] / "grading" / "learner_places.py"
    source.write_bytes(old)  # the course before the update, as she ran it
    py_compile.compile(str(source), doraise=True)
    source.unlink()  # git pull: the module moved to grading/privacy/
    try:
        result = _erase(c, "ana")
    except ErasureError as exc:
        said = str(exc)[:1500]
        pytest.fail(f"le code compilé d'une version du cours bloque l'effacement\u00a0: {said}")
    assert not result.failures, result.failures


@pytest.mark.slow
def test_compiled_code_of_a_script_she_deleted_is_named(petite_classe):
    """The other side of the moved module: the compiled copy of a teacher's script she deleted
    (its list of the class in a constant) names the learner; outside the course's folders it
    is hers, so it is named (« à supprimer à la main »), never deleted. One that names nobody
    is not named."""
    import py_compile

    from grading.erase_learner import ErasureError

    c = petite_classe
    folder = c["grader"] / "outils"
    folder.mkdir()
    for name, text in (("groupes", "GROUPE_B = ['ana', 'ben']\n"), ("vide", "X = 1\n")):
        (folder / f"{name}.py").write_text(text, encoding="utf-8")
        py_compile.compile(str(folder / f"{name}.py"), doraise=True)
        (folder / f"{name}.py").unlink()
    compiled = {p.name.split(".")[0]: p for p in (folder / "__pycache__").iterdir()}
    with pytest.raises(ErasureError, match="groupes.cpython") as refused:
        _erase(c, "ana")
    assert "vide.cpython" not in str(refused.value)
    assert compiled["groupes"].exists() and compiled["vide"].exists()


@pytest.mark.slow
def test_a_link_named_like_compiled_code_is_never_deleted_for_what_it_leads_to(petite_classe):
    """A link in a ``__pycache__`` named like a module's compiled code, leading to the class
    list kept outside grader/: what it leads to is named, the link kept (deleting it would
    hide the list from the proof, which would then pass)."""
    from grading.erase_learner import ErasureError

    c = petite_classe
    outside = c["tmp"] / "ailleurs" / "classe.csv"
    outside.parent.mkdir()
    outside.write_text("ana;Ana;Martin\n", encoding="utf-8")
    link = c["grader"] / "outils" / "__pycache__" / "groupes.cpython-311.pyc"
    link.parent.mkdir(parents=True)
    link.symlink_to(outside)
    with pytest.raises(ErasureError, match="groupes.cpython-311.pyc"):
        _erase(c, "ana")
    assert link.is_symlink() and outside.read_text(encoding="utf-8").startswith("ana;")


@pytest.mark.slow
def test_a_file_a_classmate_handed_in_that_starts_like_compiled_code_never_exhausts_memory(
    petite_classe,
):
    """Review7: e31747c searches a ``.pyc``'s strings one by one (``packed._compiled_strings``),
    for any file whose bytes 2-3 are « \\r\\n » and byte 16 is « \\xe3 », wherever it is. It
    reads every byte of the file as a possible type byte: each « a A u t » and their flagged
    forms followed by a 4-byte length that fits in the file gives a copy of the file from there
    on, all kept in one list, then joined: memory grows with the square of the file's size. Ben
    hands in ``mesures.bin`` (400 KB, far under nbgrader's 100 MB per file): 17 bytes of
    header, then « a » and a length of 128 KiB, over and over. ``make oublier-eleve`` of
    anyone stops on a MemoryError traceback (limited here to 2 GiB of address space; without a
    limit, 7 GB: a small hub's container is killed). A real compiled module does the same once
    it holds a few MB of bytes (a resource module, 16 MB: MemoryError under 6 GiB). Control:
    the same file with one header byte changed is searched, and named, under the same limit."""
    c = petite_classe
    kept = c["grader"] / "submitted" / "ben" / "oublier" / "mesures.bin"
    body = (b"a" + (2**17).to_bytes(4, "little")) * 80_000 + b"\x00ana.martin@exemple.fr\x00"
    kept.write_bytes(b"\xf3\r\r\n" + bytes(12) + b"\x00" + body)
    said = _dry_run_in_two_gigabytes(c, "ana")  # control: not like a .pyc, named
    assert "Traceback" not in said and "mesures.bin" in said, said[-1500:]
    kept.write_bytes(b"\xf3\r\r\n" + bytes(12) + b"\xe3" + body)
    said = _dry_run_in_two_gigabytes(c, "ana")
    assert "Traceback" not in said and "MemoryError" not in said, said[-1500:]
    assert "mesures.bin" in said, said[-1500:]


@pytest.mark.slow
def test_compiled_code_naming_a_classmate_tiziana_never_blocks_the_erasure_of_ana(
    petite_classe,
):
    """Review7: a ``.pyc``'s strings are searched one by one (``packed._compiled_strings``),
    every byte read as a possible type byte: « z » is marshal's short ASCII string, its next
    byte the length. In « Tiziana Rossi » the « z » and the « i » (105) cut « ana Rossi… » out
    of a classmate's name, a word of its own once the strings are joined: the teacher's script
    grader/outils/groupes.py, compiled by Python on its first import (any Python: 3.11, 3.12,
    3.13), refuses the erasure of ana (« fichier binaire à supprimer à la main »), although
    Tiziana Rossi is a classmate, registered (her name is never ana's mention), and nothing
    in the class names ana. Control: the same script, not compiled, is no mention."""
    import py_compile

    from erase_scenes import _enrol

    c = petite_classe
    _enrol(c, "tiz", "Tiziana", "Rossi")
    folder = c["grader"] / "outils"
    folder.mkdir()
    script = folder / "groupes.py"
    script.write_text('GROUPE_B = ["Tiziana Rossi", "Ben Durand"]\n', encoding="utf-8")
    assert not _erase(_copy_class(c), "ana").failures  # control: the script alone
    compiled = Path(py_compile.compile(str(script), doraise=True))
    assert b"ana" not in compiled.read_bytes().replace(b"Tiziana", b"")
    _assert_proved(c, "ana", "le code compilé d'un script nommant Tiziana Rossi")


@pytest.mark.slow
def test_compiled_code_naming_the_learner_in_a_bytes_constant_is_deleted_or_named(petite_classe):
    """Review7: ``packed._compiled_strings`` cuts out marshal's text strings (types « a A u t z
    Z » and their flagged forms), not its byte strings (« s », 0xf3 flagged): in a ``.pyc``, a
    bytes constant ``b"ana"`` sits between a length and the next object's type byte (a letter
    or a lead byte: no word boundary), so neither the raw bytes nor the strings name her, in
    3.11, 3.12 and 3.13 alike. The compiled copy of the teacher's deleted script
    (``COMPTES = (b"ana", b"ben")``) is dead code that names her: passed over, « Preuve
    faite », the file left holding her id. Control: the same script with ``"ana"``. Since
    compiled code out of the course's folders is named, never deleted, both are named."""
    import py_compile

    c = petite_classe
    folder = c["grader"] / "outils"
    folder.mkdir()
    compiled = {}
    for name, text in (
        ("texte", "COMPTES = ('ana', 'ben')\n"),
        ("octets", "COMPTES = (b'ana', b'ben')\n"),
    ):
        (folder / f"{name}.py").write_text(text, encoding="utf-8")
        compiled[name] = Path(py_compile.compile(str(folder / f"{name}.py"), doraise=True))
        (folder / f"{name}.py").unlink()
    assert b"\x03\x00\x00\x00ana" in compiled["octets"].read_bytes()  # her id, 3 bytes long
    from grading.erase_learner import ErasureError  # outside the course's folders: named

    with pytest.raises(ErasureError) as refused:
        _erase(c, "ana")
    assert "texte.cpython" in str(refused.value)  # control
    assert "octets.cpython" in str(refused.value)


@pytest.mark.slow
def test_a_classmate_s_compiled_file_in_the_teacher_s_copy_of_his_work_is_never_deleted(
    petite_classe,
):
    """Review7: e31747c deletes, with the learner, compiled code whose source is gone outside
    the class's data folders (« dead code: a module an update of the course moved, a script
    the teacher deleted »); inside them « a classmate's is his work, named, never deleted ».
    Which is which is decided by the folder alone. Ben handed in his folder with its
    ``__pycache__`` (``aide.py`` renamed since, its compiled copy naming his partner ana); the
    teacher keeps a copy of his work at the end of the year (grader/archives-2025/ben/). The
    erasure of ana deletes the file from her copy, telling her « une mise à jour du cours l'a
    déplacée, ou vous l'avez supprimée », while Ben's other files there that name ana are
    only named for her to handle. Control: the same file in submitted/ben is named, never
    deleted."""
    import py_compile

    from grading.erase_learner import ErasureError

    c = petite_classe
    work = c["grader"] / "submitted" / "ben" / "oublier"
    (work / "aide.py").write_text('BINOME = "ana"\n', encoding="utf-8")
    handed = Path(py_compile.compile(str(work / "aide.py"), doraise=True))
    (work / "aide.py").unlink()  # renamed by Ben before he handed in
    kept = c["grader"] / "archives-2025" / "ben"
    shutil.copytree(work, kept)
    copy = kept / "__pycache__" / handed.name
    with pytest.raises(ErasureError, match=handed.name):
        _erase(c, "ana")
    assert handed.exists() and copy.exists()  # control: in submitted/, named
    handed.unlink()
    with contextlib.suppress(ErasureError):
        _erase(c, "ana")
    assert copy.exists(), "la copie du travail de Ben a perdu un fichier"


@pytest.mark.slow
def test_a_link_named_like_compiled_code_to_a_file_outside_the_class_is_never_taken_for_dead_code(
    petite_classe,
):
    """Review7: the walk reads a link to a file outside the class folder (never changed there:
    « searched, never rewritten »), and ``_orphan_compiled`` judges it by its name: a link in a
    ``__pycache__`` named like compiled code, without a source beside it, is « dead code »,
    « supprimé à l'effacement ». The erasure removes the link, the file it led to (outside the
    class folder, naming ana) is untouched, and the proof, which no longer meets the link,
    says « Preuve faite ». Control: the same link under another name is named for the
    teacher."""
    import py_compile

    from grading.erase_learner import ErasureError

    c = petite_classe
    elsewhere = c["tmp"] / "ailleurs"
    elsewhere.mkdir()
    (elsewhere / "groupes.py").write_text("GROUPE_B = ['ana', 'ben']\n", encoding="utf-8")
    target = Path(py_compile.compile(str(elsewhere / "groupes.py"), doraise=True))
    cache = c["grader"] / "outils" / "__pycache__"
    cache.mkdir(parents=True)
    link = cache / "groupes.bin"
    link.symlink_to(target)
    with pytest.raises(ErasureError, match="groupes.bin"):  # control
        _erase(c, "ana")
    link.rename(cache / target.name)
    with pytest.raises(ErasureError, match=target.name):
        _erase(c, "ana")
    assert (cache / target.name).is_symlink() and b"ana" in target.read_bytes()


@pytest.mark.slow
def test_a_classmate_s_compiled_file_made_by_the_learners_python_is_named(petite_classe):
    """Review8: since 2d231a5 only a ``.pyc`` that starts with *this* Python's magic number is
    unmarshalled; any other is searched as raw bytes, where marshal puts a type byte after each
    string (« \\xda\\x03ana\\xda\\x03ben »: « ana » glued to a lead byte, no word). The
    learners' venvs run the newest Python (``learner_python()``: 3.13 here, the grading tools
    3.11). nbgrader leaves ``__pycache__`` out of a submission, not out of an archive: Ben
    hands in ``projet.zip``, his project zipped with its ``__pycache__`` (``aide.py`` renamed
    since, ``BINOME = "ana"``), a 3.13 file: never named, « Preuve faite ». Before 2d231a5 the
    guessed strings found it. Control: the same module compiled by the tools' Python, in the
    same archive, is named."""
    import subprocess
    import sys
    import zipfile

    from grading.erase_learner import ErasureError
    from learner_env import learner_python

    python = learner_python()
    version = subprocess.run(
        [python, "-c", "import sys; print('%d%d' % sys.version_info[:2])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    if version == f"{sys.version_info[0]}{sys.version_info[1]}":
        pytest.skip("une seule version de Python sur cette machine")
    c = petite_classe
    project = c["grader"] / "projet-de-ben"  # his machine's folder, outside the class
    project.mkdir()
    (project / "aide.py").write_text('BINOME = "ana"\nAUTRE = "ben"\n', encoding="utf-8")
    compiled = {}
    for which, interpreter in (("ours", sys.executable), ("his", python)):
        subprocess.run([interpreter, "-m", "py_compile", str(project / "aide.py")], check=True)
        made = max((project / "__pycache__").iterdir(), key=os.path.getmtime)
        compiled[which] = made.name, made.read_bytes()
    assert compiled["his"][0] == f"aide.cpython-{version}.pyc"
    assert b"\x03ana\xda" in compiled["his"][1]  # her id glued to the next type byte
    archive = c["grader"] / "submitted" / "ben" / "oublier" / "projet.zip"

    def handed_in(which: str) -> None:
        with zipfile.ZipFile(archive, "w") as zf:
            name, data = compiled[which]
            zf.writestr(f"projet/__pycache__/{name}", data)

    shutil.rmtree(project)
    handed_in("ours")
    with pytest.raises(ErasureError, match="projet.zip"):  # control
        _erase(c, "ana")
    handed_in("his")
    with pytest.raises(ErasureError, match="projet.zip"):
        _erase(c, "ana")


@pytest.mark.slow
def test_a_classmate_s_zipped_project_with_its_venv_never_costs_minutes(petite_classe):
    """Review8: since 2d231a5 each ``.pyc`` is read by a Python of its own (``python -I -S -c``,
    13 to 17 ms a file when measured alone), where the old search walked its bytes in-process.
    A learner who zips his project with its venv (``projet.zip``: a venv's compiled files,
    10,937 in this test set's own .venv) hands in an archive whose members are read one child
    each: here 1,500 of this test set's own compiled files made the dry run of ana take 65 s,
    5 s for the control; a whole venv, several minutes added to every erasure of the class.
    Control: the same archive with each member's magic number blanked (same size, same
    names). Measured in CPU seconds, this process's and its children's (a child per file is
    what cost): a wall clock failed it beside another run of the suite (25 s against 11 s)."""
    import os
    import sys
    import zipfile

    from erase_scenes import _setup
    from grading.erase_learner import erase

    c = petite_classe
    site = Path(sys.executable).parent.parent / "lib"
    compiled = sorted(site.rglob("*.cpython-311.pyc"))[:1500]
    assert len(compiled) == 1500
    work = c["grader"] / "submitted" / "ben" / "oublier"

    def handed_in(blank: bool) -> float:
        with zipfile.ZipFile(work / "projet.zip", "w", zipfile.ZIP_DEFLATED) as zf:
            for n, pyc in enumerate(compiled):
                data = pyc.read_bytes()
                data = b"\0\0\0\0" + data[4:] if blank else data
                zf.writestr(f"projet/.venv/{n}/{pyc.name}", data)
        start = sum(os.times()[:4])  # user and system, this process and its children
        erase("ana", _setup(c), confirm=False, control="cyr")  # what make oublier-eleve shows
        return sum(os.times()[:4]) - start

    control = handed_in(blank=True)
    took = handed_in(blank=False)
    assert took < control + 10, (
        f"{took:.0f} s de calcul pour 1 500 fichiers compilés ({control:.0f} s sans)"
    )


@pytest.mark.slow
def test_a_classmate_s_compiled_file_holding_a_dict_constant_is_named(petite_classe):
    """Review8: the child reading a ``.pyc`` (``packed._READ_CONSTANTS``) descends code
    objects, tuples, lists, sets and frozensets, never a dict, which marshal writes and reads
    as any constant. Python's compiler never puts one in ``co_consts``, but a file a learner
    hands in is hostile: ``code.replace(co_consts=({"ana": "zed"}, …))`` written with its
    header gives a ``.pyc`` marshal reads back whole, whose bytes read ``\\xda\\x03ana\\xda``
    (no word) and whose constants the child passes over: never named. Control: the same file
    with the tuple ``("ana", "zed")`` is named."""
    import importlib.util
    import marshal
    import zipfile

    from grading.erase_learner import ErasureError

    c = petite_classe
    code = compile("BINOME = 1\n", "aide.py", "exec")
    archive = c["grader"] / "submitted" / "ben" / "oublier" / "projet.zip"

    def handed_in(constant: object) -> None:
        crafted = code.replace(co_consts=(constant, *code.co_consts))
        data = importlib.util.MAGIC_NUMBER + bytes(12) + marshal.dumps(crafted)
        assert b"\x03ana\xda" in data
        with zipfile.ZipFile(archive, "w") as zf:
            zf.writestr("projet/__pycache__/aide.cpython-311.pyc", data)

    handed_in(("ana", "zed"))
    with pytest.raises(ErasureError, match="projet.zip"):  # control
        _erase(c, "ana")
    handed_in({"ana": "zed"})
    with pytest.raises(ErasureError, match="projet.zip"):
        _erase(c, "ana")
