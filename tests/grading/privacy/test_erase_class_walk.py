"""The walk of the class folder (learner_places ``_scan_class``: ``walk``, ``linked``,
``_read_whole``): every file is read or named, never passed over: Jupyter's checkpoints, a link
to a file elsewhere, a file or folder the teacher cannot read, a file too big for memory, a file
named like the erasure register."""

from __future__ import annotations

import dataclasses
import os
import shutil
from pathlib import Path

import pytest
from erase_scenes import (
    _class_list,
    _dry_run_in_two_gigabytes,
    _erase,
    _erased_as_another_teacher,
    _setup,
)

pytestmark = [pytest.mark.timeout(300)]


@pytest.mark.slow
def test_a_file_or_folder_named_like_the_erasure_register_is_searched(petite_classe):
    """ana's extracted work holds a folder « effacements.json » and cyr's a file of that name,
    both naming ben: the erasure register's names skip only the register itself (beside the
    gradebook), so both mentions are found and « Preuve faite » is not said while they stay
    (a shrink of the scan once skipped every folder of that name: the proof was given)."""
    from grading.privacy.erasure_register import REGISTER_NAME, record_erasure, registers_of
    from grading.privacy.learner_places import scan

    c = petite_classe
    extracted = c["grader"] / "downloaded" / "oublier" / "extracted"
    hidden = [
        extracted / "ana" / REGISTER_NAME / "notes.txt",
        extracted / "cyr" / REGISTER_NAME,
    ]
    texts = ["J'ai tout copié sur {}.", '{{"note": "J\'ai tout copié sur {}."}}']
    for path, text in zip(hidden, texts, strict=True):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text.format("Ben Durand"), encoding="utf-8")
    record_erasure("dou", registers_of(c["grader"]))  # the real register, beside the gradebook
    assert (c["grader"] / REGISTER_NAME).is_file()
    mentions = {f.where for f in scan("ben", _setup(c)).found if f.action == "mention"}
    assert {str(p) for p in hidden} <= mentions, mentions
    assert str(c["grader"] / REGISTER_NAME) not in mentions
    from grading.erase_learner import ErasureError, erase

    with pytest.raises(ErasureError, match=r"nommé\(e\) dans 2 endroit"):
        _erase(c, "ben")
    read = [p.read_text(encoding="utf-8") for p in hidden]
    assert read == [t.format("Ben Durand") for t in texts]
    register = (c["grader"] / REGISTER_NAME).read_bytes()
    setup = dataclasses.replace(_setup(c), redact=True)
    result = erase("ben", setup, confirm=True, control="cyr")
    assert not result.failures, result.failures  # « Preuve faite »: now true
    assert [p.read_text(encoding="utf-8") for p in hidden] == [t.format("[retiré]") for t in texts]
    assert (c["grader"] / REGISTER_NAME).read_bytes() != register  # ben recorded, not redacted
    assert b"Durand" not in (c["grader"] / REGISTER_NAME).read_bytes()


@pytest.mark.slow
def test_jupyters_checkpoint_of_the_class_list_is_searched(petite_classe):
    """Found in review (before this change too): the teacher edits grader/eleves.csv in
    JupyterLab (``make formgrader`` opens it on the course), which keeps its copy in
    grader/.ipynb_checkpoints/eleves-checkpoint.csv; ``.ipynb_checkpoints`` at the top of grader/
    is never searched (``_NOT_DATA``), so ``make oublier-eleve ID=ana CONFIRMER=1`` says
    « Preuve faite » while that copy still holds her line (name and e-mail). The control: the
    same copy in a data folder (rapport/.ipynb_checkpoints/) is listed by the dry run."""
    from grading_course import grading

    c = petite_classe
    grader = c["grader"]
    base = ("erase_learner", "--eleves", str(c["roster"]), "--echange", str(c["exchange"]))
    base += ("--temoin", "cyr")
    roster = c["roster"].read_bytes()
    control = grader / "rapport" / ".ipynb_checkpoints" / "eleves-checkpoint.csv"
    control.parent.mkdir(parents=True)
    control.write_bytes(roster)
    dry = grading(grader, *base, "--", "ana")  # the control: listed by the dry run
    assert "rapport/.ipynb_checkpoints/eleves-checkpoint.csv" in dry.stdout, dry.stdout + dry.stderr
    control.unlink()
    checkpoint = grader / ".ipynb_checkpoints" / "eleves-checkpoint.csv"
    checkpoint.parent.mkdir()
    checkpoint.write_bytes(roster)
    dry = grading(grader, *base, "--", "ana")
    assert "eleves-checkpoint.csv" in dry.stdout, dry.stdout + dry.stderr
    proc = grading(grader, *base, "--confirmer", "--", "ana")
    out = proc.stdout + proc.stderr
    assert b"ana.martin@exemple.fr" in checkpoint.read_bytes()  # she is still there
    assert proc.returncode != 0 and "Preuve faite" not in out, out


def test_jupyters_copy_of_a_teachers_class_list_is_searched(petite_classe):
    """Review2: a class list the teacher keeps in grader/hub/ and opens in JupyterLab leaves
    its checkpoint, hub/.ipynb_checkpoints/classe-checkpoint.csv, a copy of her file (not of
    the course's): every .ipynb_checkpoints of a shipped folder is skipped, so once she deletes
    classe.csv as told, « Preuve faite » while the copy still names ana. Control: the file
    itself is named."""
    from grading.erase_learner import ErasureError

    c = petite_classe
    grader = c["grader"]
    kept = _class_list(c)
    checkpoint = grader / "hub" / ".ipynb_checkpoints" / "classe-checkpoint.csv"
    checkpoint.parent.mkdir()
    shutil.copy(kept, checkpoint)
    with pytest.raises(ErasureError, match="classe.csv"):  # control: her file is named
        _erase(c, "ana")
    kept.unlink()  # what the refusal tells her to do
    with pytest.raises(ErasureError, match="classe-checkpoint.csv"):
        _erase(c, "ana")
    assert (grader / "submitted" / "ana").is_dir()


@pytest.mark.slow
def test_a_file_the_teacher_cannot_read_is_never_taken_for_no_mention(petite_classe):
    """Review3: the class scan passes over a file it cannot read (``except OSError:
    continue``). On a shared machine or a hub, a class list written into grader/hub/ by root
    (``sudo``, mode 0600: its e-mails are private) names ana; the teacher, a normal user, runs
    the erasure: « Preuve faite », while her name is in a file the command never opened. It
    should be named (unreadable: no proof). The same list in a folder of root's she cannot
    open (hub/prive/, 0700) stops the command on a Python traceback (PermissionError).
    Control: the same file readable by the teacher is named."""

    def prepare(case: str, here: Path, user: str) -> None:
        kept = here / "cours" / "grader" / "hub" / "classe.csv"
        kept.write_text("id,nom,courriel\nana,Ana Martin,ana.martin@exemple.fr\n")
        if case == "illisible":
            kept.chmod(0o600)  # root's
        elif case == "dossier":  # root's folder, closed to others
            hidden = kept.parent / "prive"
            hidden.mkdir(mode=0o700)
            kept.rename(hidden / "classe.csv")
        else:
            shutil.chown(kept, user)

    cases = ("lisible", "illisible", "dossier")
    said = _erased_as_another_teacher(petite_classe, "r3", cases, prepare)
    assert said["lisible"].startswith("REFUS") and "classe.csv" in said["lisible"], said
    assert not said["illisible"].startswith("PREUVE FAITE"), said["illisible"]
    assert "classe.csv" in said["illisible"], said["illisible"]
    # the same list in a folder of root's the teacher cannot open (hub/prive/, 0700)
    assert "Traceback" not in said["dossier"], said["dossier"]  # in French, named
    assert not said["dossier"].startswith("PREUVE FAITE"), said["dossier"]
    assert "prive" in said["dossier"], said["dossier"]


@pytest.mark.slow
def test_a_class_list_linked_into_grader_is_named(petite_classe):
    """Review3: the teacher keeps her class list on another disk and links it beside the hub's
    recipes (grader/hub/classe.csv -> …/disque/classe.csv, naming ana). The class scan skips
    every symbolic link without a word (``child.is_symlink(): continue``), so « Preuve faite »
    while the class folder still leads to her name and e-mail. A linked submitted/ana is named
    « est un lien » (test_a_symlinked_submitted_folder_is_named); this one should be too.
    Control: the same list as a plain file is named."""
    from grading.erase_learner import ErasureError

    c = petite_classe
    kept = _class_list(c)
    with pytest.raises(ErasureError, match="classe.csv"):  # control: a plain file, named
        _erase(c, "ana")
    elsewhere = c["tmp"] / "disque" / "classe.csv"
    elsewhere.parent.mkdir()
    kept.rename(elsewhere)
    kept.symlink_to(elsewhere)
    with pytest.raises(ErasureError, match="classe.csv"):
        _erase(c, "ana")
    assert elsewhere.read_text(encoding="utf-8").count("ana") == 2  # never followed to erase


@pytest.mark.slow
def test_a_file_bigger_than_the_memory_in_grader_stops_nothing_on_a_traceback(petite_classe):
    """Review4: the class scan reads each file whole (``read_bytes``), a file a link leads to
    as well: a recording of a class kept beside the hub's recipes (grader/hub/seance.mp4, here
    a 3 GiB sparse file) on a machine that cannot hold it makes ``make oublier-eleve`` stop on
    a ``MemoryError`` traceback (the command limited here to 2 GiB of address space; without
    a limit, a small hub's container is killed by the kernel). It should read it in parts, or
    name it « à vérifier à la main ». Control: the same command under the same limit without
    the file runs."""

    c = petite_classe
    grader = c["grader"]

    def dry_run() -> str:
        return _dry_run_in_two_gigabytes(c, "ana")

    said = dry_run()  # the control
    assert "Traceback" not in said and "submitted/ana" in said, said[-1500:]
    video = grader / "hub" / "seance.mp4"
    with open(video, "wb") as file:
        file.truncate(3 * 2**30)
    try:
        said = dry_run()
    finally:
        os.unlink(video)
    assert "Traceback" not in said and "MemoryError" not in said, said[-1500:]
    assert "seance.mp4" in said, said[-1500:]


@pytest.mark.slow
def test_a_received_archive_whose_names_are_not_utf8_is_refused_in_french(petite_classe):
    """A student's zip in the download folder whose member name says UTF-8 and is not (the
    twin of zip-collect's hole): zipfile raises UnicodeDecodeError at the opening, which ended
    the erasure on a traceback. The scan refuses it as any unreadable archive, in French, and
    nothing is erased."""
    import zipfile

    from grading.privacy.learner_places import ErasureError, scan

    c = petite_classe
    archive = c["grader"] / "downloaded" / "oublier" / "archive" / "eve.zip"
    archive.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("ana/é.ipynb", "{}")  # a name zipfile flags as UTF-8
    archive.write_bytes(archive.read_bytes().replace("é".encode(), b"\xff\xff"))
    with pytest.raises(ErasureError, match=r"^Archive illisible\u00a0: .*eve\.zip \(.*UTF-8"):
        scan("ben", _setup(c))
    assert archive.is_file()
