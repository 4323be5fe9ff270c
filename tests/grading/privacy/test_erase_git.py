"""Git repositories in the class folder (learner_places ``_scan_git``, ``_is_repository``,
``_git_object``): histories, bare repositories, a classmate's .git, branches, git's own store
(packs, indexes, strays) and folder names, a course the teacher versions in grader/, a clone
of the course there (its history is the course's, what she commits in it is searched)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from erase_scenes import (
    _assert_proved,
    _class_list,
    _copy_class,
    _dry_run_in_two_gigabytes,
    _enrol,
    _erase,
    _git,
)

pytestmark = [pytest.mark.timeout(300)]


@pytest.mark.slow
def test_a_class_list_in_the_history_of_a_git_repository_in_grader_is_named(petite_classe):
    """Review3: a course downloaded as a zip, the teacher versions grader/ (``git init`` there)
    and commits her class list grader/hub/classe.csv naming ana. The erasure names the file;
    she removes it as told (``git rm``, a commit): « Preuve faite », while grader/.git, a
    folder the class scan skips by name, still holds it (``git log -p`` shows ana's e-mail),
    and the summary of what the command cannot reach says nothing of it. Control: the file in
    her working tree is named."""
    import subprocess

    from grading.erase_learner import ErasureError

    c = petite_classe
    grader = c["grader"]
    _class_list(c)
    _git(grader, "init", "-q")
    _git(grader, "add", "hub/classe.csv", "nbgrader_config.py")
    _git(grader, "commit", "-qm", "ma classe")
    with pytest.raises(ErasureError, match="classe.csv"):  # control: her file is named
        _erase(c, "ana")
    _git(grader, "rm", "-q", "hub/classe.csv")
    _git(grader, "commit", "-qm", "sans la liste")
    history = subprocess.run(
        ["git", "log", "-p", "--all"], cwd=grader, capture_output=True, text=True, check=True
    ).stdout
    assert "ana.martin@exemple.fr" in history  # she is still in grader/.git
    try:
        result = _erase(c, "ana")
    except ErasureError as exc:
        assert ".git" in str(exc), exc
        return
    said = "\n".join(str(f) for f in result.failures)
    assert result.failures and ".git" in said, "« Preuve faite », ana dans grader/.git"


def _history_naming_ana(c) -> Path:
    """A working repository outside grader/ whose history holds a class list naming ana (added,
    then removed by ``git rm``): only git's objects, zlib-compressed, still name her."""
    work = c["tmp"] / "travail"
    work.mkdir()
    _git(work, "init", "-q")
    text = "id,nom,courriel\nana,Ana Martin,ana.martin@exemple.fr\n"
    (work / "classe.csv").write_text(text, encoding="utf-8")
    _git(work, "add", "classe.csv")
    _git(work, "commit", "-qm", "ma classe")
    _git(work, "rm", "-q", "classe.csv")
    (work / "LISEZMOI").write_text("notes de l'enseignante\n", encoding="utf-8")
    _git(work, "add", "LISEZMOI")
    _git(work, "commit", "-qm", "sans la liste")
    return work


def _committed_then_removed(
    repository: Path, name: str, text: str, message: str = "ma classe"
) -> None:
    """`name` (holding `text`) committed in `repository` (`message`), then removed as the
    erasure tells the teacher (``git rm``, a commit): only the history still holds it."""
    (repository / name).write_text(text, encoding="utf-8")
    _git(repository, "add", name)
    _git(repository, "commit", "-qm", message)
    _git(repository, "rm", "-q", name)
    _git(repository, "commit", "-qm", "sans la liste")


def _pack_naming_ana(c) -> bytes:
    """That history as ``git fetch`` receives it: one pack of all its objects (``git
    pack-objects --all``), her class list deflate-compressed in it."""
    import subprocess

    work = _history_naming_ana(c)
    return subprocess.run(
        ["git", "-C", str(work), "pack-objects", "--all", "--stdout"],
        input=b"",
        capture_output=True,
        check=True,
    ).stdout


def _notes(c, message: str | None = "mes notes") -> Path:
    """The teacher's notes versioned beside the hub's recipes (grader/hub/notes/, ``git init``):
    one commit of a LISEZMOI, `message` its message (None: nothing committed yet)."""
    notes = c["grader"] / "hub" / "notes"
    notes.mkdir()
    _git(notes, "init", "-q")
    if message is not None:
        (notes / "LISEZMOI").write_text("mes notes\n", encoding="utf-8")
        _git(notes, "add", "LISEZMOI")
        _git(notes, "commit", "-qm", message)
    return notes


@pytest.mark.slow
def test_a_bare_git_repository_in_grader_is_searched_or_named(petite_classe):
    """Review4: the scan knows a git repository by a folder named ``.git``. A bare repository,
    the teacher's backup remote kept beside the hub's recipes (``git clone --bare`` into
    grader/hub/notes.git, as every git guide makes one), has no ``.git``: its files are walked
    as bytes, its objects are zlib streams the scan never expands, and the class list in its
    history (ana's name and e-mail) gets « Preuve faite ». Control: the same history as a
    normal clone (grader/hub/notes/.git) is named."""
    import subprocess

    from grading.erase_learner import ErasureError

    c = petite_classe
    work = _history_naming_ana(c)
    hub = c["grader"] / "hub"
    clone = hub / "notes"
    subprocess.run(["git", "clone", "-q", str(work), str(clone)], check=True)
    with pytest.raises(ErasureError, match="notes"):  # control: a clone's .git is searched
        _erase(c, "ana")
    shutil.rmtree(clone)
    bare = hub / "notes.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(work), str(bare)], check=True)
    log = ["git", "--git-dir", str(bare), "log", "-p", "--all"]
    history = subprocess.run(log, capture_output=True, text=True, check=True).stdout
    assert "ana.martin@exemple.fr" in history  # she is still in grader/hub/notes.git
    with pytest.raises(ErasureError, match="notes.git"):
        _erase(c, "ana")


@pytest.mark.slow
def test_a_git_repository_in_a_classmates_submission_is_searched_or_named(petite_classe):
    """Review4: a ``.git`` is handed to git only outside the data folders; inside them (Ben
    worked on the TP with Ana in a git repository and handed in the folder, .git included:
    nbgrader's ignore list keeps it) its files are walked as bytes, its objects are zlib
    streams never expanded, and Ana's name and e-mail, the author of Ben's commits, get
    « Preuve faite ». Control: the same text as a plain file in his folder is named."""
    import subprocess

    from grading.erase_learner import ErasureError

    c = petite_classe
    work = _history_naming_ana(c)
    folder = c["grader"] / "submitted" / "ben" / "oublier"
    plain = folder / "classe.csv"
    plain.write_text("ana,Ana Martin,ana.martin@exemple.fr\n", encoding="utf-8")
    with pytest.raises(ErasureError, match="travail d'autres élèves"):  # control: named
        _erase(c, "ana")
    plain.unlink()
    subprocess.run(["git", "clone", "-q", "--bare", str(work), str(folder / ".git")], check=True)
    log = ["git", "--git-dir", str(folder / ".git"), "log", "-p", "--all"]
    history = subprocess.run(log, capture_output=True, text=True, check=True).stdout
    assert "ana.martin@exemple.fr" in history  # she is still in Ben's folder
    with pytest.raises(ErasureError, match="travail d'autres élèves|.git"):
        _erase(c, "ana")


@pytest.mark.slow
def test_a_git_branch_named_after_the_learner_in_grader_is_named(petite_classe):
    """Review4: a git repository in grader/ is searched through ``git cat-file
    --batch-all-objects``: its objects only, never its refs. The teacher's notes, versioned in
    grader/hub/notes/, keep one branch per learner she follows (``git branch suivi-ana-martin``):
    her name stays in .git/refs (and in the reflog), and the erasure says « Preuve faite ».
    Control: her name in a commit message is named."""
    import subprocess

    from grading.erase_learner import ErasureError

    c = petite_classe
    notes = _notes(c, "suivi de ana-martin")
    with pytest.raises(ErasureError, match="notes"):  # control: a commit message, named
        _erase(c, "ana")
    _git(notes, "commit", "-q", "--amend", "-m", "mes notes")
    _git(notes, "reflog", "expire", "--expire=now", "--all")
    _git(notes, "gc", "-q", "--prune=now")
    _git(notes, "branch", "suivi-ana-martin")
    refs = ["git", "-C", str(notes), "branch", "--list"]
    assert "suivi-ana-martin" in subprocess.run(refs, capture_output=True, text=True).stdout
    with pytest.raises(ErasureError, match="notes"):
        _erase(c, "ana")


@pytest.mark.slow
def test_a_class_list_dropped_in_a_git_repository_s_store_is_named(petite_classe):
    """Lead, after review4: a git repository's objects/ is read through git, its own files
    (loose objects, packs) only; a class list dropped there (objects/classe.csv) is not git's,
    so it is searched. Control: the repository's history alone names her nowhere."""
    from grading.erase_learner import ErasureError

    c = petite_classe
    notes = _notes(c)
    assert not _erase(_copy_class(c), "ana").failures  # control, on a copy
    dropped = notes / ".git" / "objects" / "classe.csv"
    dropped.write_text("ana,Ana Martin,ana.martin@exemple.fr\n", encoding="utf-8")
    with pytest.raises(ErasureError, match="objects/classe.csv"):
        _erase(c, "ana")


@pytest.mark.slow
def test_a_git_folder_git_no_longer_recognizes_is_never_taken_for_the_course_s(petite_classe):
    """Review4: the scan runs ``git -C <folder holding .git> cat-file --batch-all-objects``.
    When git does not recognize that .git (its empty refs/ folders dropped by a copy or a
    cloud sync, after ``git gc`` packed every ref), git looks upwards and reads the course's
    own repository instead (the teacher's clone of the course): the notes' pack, which holds
    ana's class list, is never searched, and the erasure says « Preuve faite ». It should
    be named, as a repository git will not read is. Control: the intact repository is
    named."""

    from grading.erase_learner import ErasureError

    c = petite_classe
    grader = c["grader"]
    course = grader.parent
    _git(course, "init", "-q")  # the teacher's clone of the course
    _git(course, "add", "grader/nbgrader_config.py")
    _git(course, "commit", "-qm", "le cours")
    work = _history_naming_ana(c)
    notes = grader / "hub" / "notes"
    shutil.copytree(work, notes)
    _git(notes, "gc", "-q")  # every ref packed: refs/heads and refs/tags are empty
    with pytest.raises(ErasureError, match="notes"):  # control: named
        _erase(c, "ana")
    assert not any(p.is_file() for p in (notes / ".git" / "refs").rglob("*"))
    shutil.rmtree(notes / ".git" / "refs")  # empty folders, dropped by the copy
    packs = list((notes / ".git" / "objects" / "pack").glob("*.pack"))
    assert packs  # her class list is still there, compressed in the pack
    with pytest.raises(ErasureError, match="notes"):
        _erase(c, "ana")


@pytest.mark.slow
def test_a_class_list_in_an_interrupted_fetch_of_a_repository_in_grader_is_named(petite_classe):
    """Review5: a git repository's ``objects/`` folder is skipped by the walk (« read through
    git ») and git only lists the objects it has indexed. A ``git fetch`` of the teacher's notes
    cut short (network, Ctrl-C) leaves the pack it received as ``objects/pack/tmp_pack_*``,
    with no index: git never lists it, the walk never reads it, and the class list it holds
    (ana's name and e-mail, deflate-compressed) gets « Preuve faite ». Control: the same pack
    once indexed (the fetch run to its end) is named."""
    import subprocess

    from grading.erase_learner import ErasureError

    c = petite_classe
    notes = _notes(c, None)
    pack = notes / ".git" / "objects" / "pack" / "tmp_pack_Xq3b1z"
    received = _pack_naming_ana(c)
    pack.write_bytes(received)  # what git fetch had received when it was stopped
    indexed = notes / ".git" / "objects" / "pack" / "pack-complet.pack"
    shutil.copy(pack, indexed)
    subprocess.run(["git", "index-pack", str(indexed)], check=True, capture_output=True)
    with pytest.raises(ErasureError, match="notes"):  # control: indexed, searched through git
        _erase(c, "ana")
    for part in indexed.parent.glob("pack-complet.*"):
        part.unlink()
    listed = ["git", "--git-dir", str(notes / ".git"), "cat-file", "--batch-all-objects"]
    listed = subprocess.run([*listed, "--batch-check"], capture_output=True, check=True)
    assert listed.stdout == b""  # git lists nothing: the pack is only the walk's to read
    with pytest.raises(ErasureError, match="notes|tmp_pack"):
        _erase(c, "ana")


@pytest.mark.slow
def test_an_empty_git_folder_a_classmate_handed_in_never_blocks_every_erasure(petite_classe):
    """Review5: any folder named ``.git`` is handed to ``git cat-file``, and one git will not
    read is named « dépôt git illisible », to check by hand. An empty ``.git`` folder in Ben's
    TP folder (a copy that kept the folder and lost its content, or a hostile student's
    ``mkdir .git``) holds nothing, and its files are walked anyway; yet no learner of the class
    can be erased until the teacher edits Ben's submission. Control: the class without it
    erases ana."""

    c = petite_classe
    copy = _copy_class(c, "controle")
    assert not _erase(copy, "ana").failures  # control: « Preuve faite »
    (c["grader"] / "submitted" / "ben" / "oublier" / ".git").mkdir()
    _assert_proved(c, "ana", "un dossier .git vide chez ben")


@pytest.mark.slow
def test_a_course_versioned_in_grader_by_the_teacher_never_blocks_the_erasure(petite_classe):
    """Lead, after review4 (finding 15) and review5: a course downloaded as a zip, the teacher
    runs ``git init`` in grader/ and commits everything, the course's files with hers. The
    repository's objects were searched whole, the course's README and ADMIN.md (which name
    « ana ») with them: erasing « ana » was refused forever. A blob whose content is a course
    file as shipped is no mention now, in git as on disk. Control: her class list committed,
    then removed with ``git rm``, is still named."""
    from grading.erase_learner import ErasureError
    from helpers import REPO

    c = petite_classe
    grader = c["grader"]
    (grader / "hub").mkdir(exist_ok=True)
    for shipped in ("README.md", "hub/ADMIN.md"):
        shutil.copy(REPO / "grader" / shipped, grader / shipped)
    assert re.search(rb"\bana\b", (grader / "README.md").read_bytes())
    _git(grader, "init", "-q")
    _git(grader, "add", "README.md", "hub/ADMIN.md", "nbgrader_config.py")
    _git(grader, "commit", "-qm", "le cours, versionné par l'enseignante")
    assert not _erase(_copy_class(c), "ana").failures  # the course's own words: no mention
    _committed_then_removed(grader, "hub/classe.csv", "ana,Ana Martin,ana.martin@exemple.fr\n")
    with pytest.raises(ErasureError, match="historique git"):
        _erase(c, "ana")


@pytest.mark.slow
@pytest.mark.parametrize("where", ["info/classe.csv", "pack/pack-{sha}.pack"])
def test_what_git_does_not_read_in_a_repository_s_store_is_named(petite_classe, where):
    """Review6: the walk leaves to git every file of ``objects/`` whose name looks like git's
    (``_GIT_OBJECT``), and git lists only the objects it indexed. ``info/.+`` takes any
    file under ``objects/info/`` for git's: the lead's own test drops the class list at
    ``objects/classe.csv`` (named), the same list at ``objects/info/classe.csv`` gets
    « Preuve faite ». A pack whose index is missing (``git index-pack`` stopped, the ``.idx``
    lost in a copy) has git's name ``pack-<sha>.pack`` but git never lists its objects: the
    class list in it gets « Preuve faite » too. Control: the same pack indexed is named."""
    import subprocess

    from grading.erase_learner import ErasureError

    c = petite_classe
    notes = _notes(c, None)
    store = notes / ".git" / "objects"
    if where.startswith("info/"):
        dropped = store / where
        dropped.write_text("ana;Ana;Martin;ana.martin@exemple.fr\n", encoding="utf-8")
        control = _copy_class(c)  # control: the same list one folder up is named
        copied = control["grader"] / "hub" / "notes" / ".git" / "objects"
        (copied / where).rename(copied / "classe.csv")
        with pytest.raises(ErasureError, match="objects/classe.csv"):
            _erase(control, "ana")
    else:
        received = _pack_naming_ana(c)
        dropped = store / where.format(sha=received[-20:].hex())  # git's name: its checksum
        dropped.write_bytes(received)
        subprocess.run(["git", "index-pack", str(dropped)], check=True, capture_output=True)
        with pytest.raises(ErasureError, match="notes"):  # control: indexed, read through git
            _erase(_copy_class(c), "ana")
        dropped.with_suffix(".idx").unlink()
        dropped.with_suffix(".rev").unlink(missing_ok=True)
    listed = ["git", "--git-dir", str(notes / ".git"), "cat-file", "--batch-all-objects"]
    listed = subprocess.run([*listed, "--batch-check"], capture_output=True, check=True)
    assert listed.stdout == b""  # git lists nothing: only the walk can read it
    with pytest.raises(ErasureError, match="notes"):
        _erase(c, "ana")


@pytest.mark.slow
def test_git_s_multi_pack_index_never_blocks_every_erasure(petite_classe):
    """Review6: since f62fe1b a file of a repository's ``objects/`` whose name is not one of
    ``_GIT_OBJECT``'s (loose objects, ``pack-<sha>.*``, ``info/…``) is a stray, and a binary
    stray with no trace is named « fichier binaire dans le magasin d'un dépôt git, que git ne
    lit pas ». git writes its own files there under other names: ``objects/pack/
    multi-pack-index`` (``git multi-pack-index write``, ``git maintenance``'s incremental
    repack, ``scalar``, ``git repack --write-midx``). The teacher's notes repository in
    grader/hub/ then blocks the erasure of every learner. Control: the same repository
    before git wrote it erases ana."""

    c = petite_classe
    notes = _notes(c)
    _git(notes, "repack", "-qad")
    assert not _erase(_copy_class(c), "ana").failures  # control: « Preuve faite »
    _git(notes, "multi-pack-index", "write")
    assert (notes / ".git" / "objects" / "pack" / "multi-pack-index").is_file()
    _assert_proved(c, "ana", "l'index de git")


@pytest.mark.slow
def test_git_s_own_folder_names_are_no_mention_of_a_short_id(petite_classe):
    """Lead, after review6: names outside the data folders are searched, but git names its
    loose objects' folders by two hexadecimal digits (objects/fe/): a learner « fe » was named
    in every repository holding such an object. Git's store is read through git, never by its
    names. Control: a note of the teacher's named « fe.txt » is named."""
    import hashlib

    from grading.erase_learner import ErasureError

    c = petite_classe
    _enrol(c, "fe", "Fé", "Lopez")
    notes = _notes(c, None)
    body = next(  # a note whose blob git stores in objects/fe/
        text
        for k in range(100000)
        if hashlib.sha1(b"blob %d\0%s" % (len(text := b"note %d\n" % k), text)).hexdigest()[:2]
        == "fe"
    )
    (notes / "LISEZMOI").write_bytes(body)
    _git(notes, "add", "LISEZMOI")
    _git(notes, "commit", "-qm", "mes notes")
    assert (notes / ".git" / "objects" / "fe").is_dir()
    (c["grader"] / "hub" / "fe.txt").write_text("rien\n", encoding="utf-8")
    with pytest.raises(ErasureError, match="fe.txt"):  # control: her name as a file's, named
        _erase(_copy_class(c), "fe")
    (c["grader"] / "hub" / "fe.txt").unlink()
    assert not _erase(c, "fe").failures


@pytest.mark.slow
def test_git_s_index_is_read_through_git_never_by_its_bytes(petite_classe):
    """CI, stop 55: git's index (.git/index) holds each staged file's times, inode and object
    id as raw bytes; searched as a binary file, a learner « fe » was found there whenever
    those bytes happened to spell it, and her erasure refused on « fichier binaire à supprimer
    à la main » (notes/.git/index, 1 trace). Here a file's time spells it (0x20666520:
    « fe »); the index is read through git, its names only. Control: a name staged then
    deleted from the folder, in the index alone, is named."""
    import os

    from grading.erase_learner import ErasureError

    c = petite_classe
    _enrol(c, "fe", "Fé", "Lopez")
    notes = _notes(c, None)
    (notes / "LISEZMOI").write_text("mes notes\n", encoding="utf-8")
    os.utime(notes / "LISEZMOI", (0x20666520, 0x20666520))
    _git(notes, "add", "LISEZMOI")
    _git(notes, "commit", "-qm", "mes notes")
    assert b" fe " in (notes / ".git" / "index").read_bytes()
    _assert_proved(_copy_class(c), "fe", "l'index de git")
    (notes / "fe.txt").write_text("rien\n", encoding="utf-8")
    _git(notes, "add", "fe.txt")
    (notes / "fe.txt").unlink()  # staged, never committed: her name is in the index only
    with pytest.raises(ErasureError, match="notes"):
        _erase(c, "fe")


def _staged_in_split_index(notes: Path, name: str) -> None:
    _git(notes, "update-index", "--split-index")
    (notes / name).write_text("x\n", encoding="utf-8")
    _git(notes, "add", name)
    _git(notes, "update-index", "--split-index")  # her entry now in the shared part
    (notes / name).unlink()
    _git(notes, "rm", "-q", "--cached", name)  # out of the index, not of its shared part


def _staged_in_a_gone_worktree(notes: Path, name: str) -> None:
    draft = notes.parent / "brouillon"
    _git(notes, "worktree", "add", "-q", str(draft))
    (draft / name).write_text("x\n", encoding="utf-8")
    _git(draft, "add", name)
    shutil.rmtree(draft)  # deleted by hand, never pruned: its index stays in notes/.git


def _staged_in_a_work_tree_above(notes: Path, name: str) -> None:
    course = notes.parents[2]  # grader/hub/notes: the course's root
    _git(notes, "config", "core.worktree", "../../../..")  # from notes/.git
    (course / "suivi").mkdir()
    (course / "suivi" / name).write_text("x\n", encoding="utf-8")
    _git(course, "--git-dir", str(notes / ".git"), "add", f"suivi/{name}")
    shutil.rmtree(course / "suivi")


def _seen_untracked_then_deleted(notes: Path, name: str) -> None:
    _git(notes, "config", "core.untrackedCache", "true")
    (notes / name).write_text("x\n", encoding="utf-8")
    for _ in range(2):  # the second status writes the cache into the index
        _git(notes, "status", "--porcelain")
    (notes / name).unlink()  # deleted by hand, as the erasure asks: still in the cache


@pytest.mark.slow
@pytest.mark.parametrize(
    "stage",
    [
        _staged_in_split_index,
        _staged_in_a_gone_worktree,
        _staged_in_a_work_tree_above,
        _seen_untracked_then_deleted,
    ],
    ids=["index-partage", "worktree-efface", "arbre-au-dessus", "cache-non-suivis"],
)
def test_a_name_in_an_index_git_keeps_elsewhere_is_named(petite_classe, stage, monkeypatch):
    """Attack, stop 56: the index read through ``git ls-files`` from grader/ missed three of
    git's places for staged names: the shared part of a split index (``git rm --cached`` leaves
    her entry there), the index of a worktree whose folder was deleted, and, when the
    repository's work tree is above grader/ (``core.worktree``), every entry outside grader/;
    and git's untracked cache, which keeps a file's name after it is deleted. Control: the
    same under another name."""
    from grading.erase_learner import ErasureError

    c = petite_classe
    control = _copy_class(c)
    for course, name in ((control, "suivi.txt"), (c, "Ana Martin.txt")):
        notes = course["grader"] / "hub" / "notes"
        notes.mkdir()
        _git(notes, "init", "-q")
        (notes / "LISEZMOI").write_text("mes notes\n", encoding="utf-8")
        _git(notes, "add", "LISEZMOI")
        _git(notes, "commit", "-qm", "mes notes")
        stage(notes, name)
    _assert_proved(control, "ana", "un nom qui n'est pas le sien")
    monkeypatch.chdir(c["grader"])  # where the teacher runs it: inside the work tree above
    with pytest.raises(ErasureError, match="notes"):
        _erase(c, "ana")


@pytest.mark.slow
def test_a_clone_of_the_course_in_grader_never_blocks_the_erasure(petite_classe):
    """Review4: a git repository in grader/ is searched object by object, with no regard for
    what the course ships: a teacher who clones the course's next version beside her class
    (``git clone … grader/cours-2025`` to compare it) brings the course's own history, whose
    tests and samples name « ana » hundreds of times. Erasing her real learner « ana » is then
    refused on « historique git à réécrire à la main », a history that is not hers to rewrite.
    Measured: the course's whole history, 85 MB through ``git cat-file``, takes 4 min 35 s
    to search, then refuses; here its last commit only (``--depth 1``, nothing checked out:
    only git's objects are there)."""
    import subprocess

    from grading.erase_learner import ErasureError
    from helpers import REPO

    c = petite_classe
    clone = c["grader"] / "cours-2025"
    command = ["git", "clone", "-q", "--depth", "1", "--no-checkout", f"file://{REPO}", str(clone)]
    subprocess.run(command, check=True)
    try:
        result = _erase(c, "ana")
    except ErasureError as exc:
        said = str(exc)[:1500]
        pytest.fail(f"l'historique du cours bloque l'effacement d'ana\u00a0: {said}")
    assert not result.failures, result.failures


@pytest.mark.slow
def test_a_class_list_committed_in_a_clone_of_the_course_in_grader_is_named(petite_classe, capsys):
    """The other side of the clone above: what the teacher commits in it (a class list, then
    ``git rm``) is the class's, not the course's history, and is searched; the summary names
    the clone beside the course's own repository, whose history it copies and which no
    erasure searches."""
    import subprocess

    from grading.erase_learner import ErasureError, main
    from helpers import REPO

    c = petite_classe
    clone = c["grader"] / "cours-2025"
    command = ["git", "clone", "-q", "--depth", "1", f"file://{REPO}", str(clone)]
    subprocess.run(command, check=True)
    _committed_then_removed(clone, "liste-groupe-b.csv", "ana;Ana;Martin\n", "groupe B")
    with pytest.raises(ErasureError, match="historique git à réécrire à la main"):
        _erase(c, "ana")
    places = ["--eleves", str(c["roster"]), "--echange", str(c["exchange"])]
    assert main(["ana", "--temoin", "cyr", *places, "--grader-dir", str(c["grader"])]) == 0
    said = capsys.readouterr().out
    assert f"clone du dépôt du cours\u00a0: {clone / '.git'}" in said, said[-1500:]


@pytest.mark.slow
@pytest.mark.parametrize("how", ["worktree", "sous-module"])
def test_a_repository_in_grader_whose_store_is_elsewhere_is_searched_or_named(petite_classe, how):
    """Review7: since 4ff091c the summary says « le reste d'un dépôt git dans grader/ est
    cherché ». A repository is known by a folder holding ``objects/``; a checkout whose
    ``.git`` is a file (« gitdir: … ») keeps its store elsewhere: her notes' branch checked
    out in grader/hub/notes (``git worktree add``), or her notes added to the course as a
    submodule (``git submodule add``: the store goes to the course's .git/modules/). Her
    history there still holds the class list she removed with ``git rm``; the walk reads the
    ``.git`` file as text, nothing reads the store, and the erasure says « Preuve faite »
    (its summary never names the repository; a link to a folder outside grader/ is named
    « que cette commande ne parcourt pas »). Control: the same history cloned in
    grader/hub/notes (its store inside) is named."""
    import subprocess

    from grading.erase_learner import ErasureError

    c = petite_classe
    work = _history_naming_ana(c)
    control = _copy_class(c)
    subprocess.run(["git", "clone", "-q", str(work), str(control["grader"] / "hub" / "notes")])
    with pytest.raises(ErasureError, match="historique git à réécrire à la main"):
        _erase(control, "ana")
    notes = c["grader"] / "hub" / "notes"
    if how == "worktree":
        _git(work, "worktree", "add", "-q", "-b", "suivi", str(notes))
    else:
        course = c["grader"].parent
        _git(course, "init", "-q")
        _git(
            course,
            "-c",
            "protocol.file.allow=always",
            "submodule",
            "add",
            "-q",
            str(work),
            "grader/hub/notes",
        )
    assert (notes / ".git").is_file() and not (notes / "classe.csv").exists()
    with pytest.raises(ErasureError, match="notes"):
        _erase(c, "ana")


@pytest.mark.slow
def test_a_submodule_s_store_inside_grader_is_named_once(petite_classe):
    """Attack, stop 56: a submodule of a repository in grader/ keeps its store in the parent's
    .git/modules/, found twice (its ``.git`` file, and as a repository of the walk): the refusal
    listed the same history twice, with twice its traces."""
    from grading.erase_learner import ErasureError

    c = petite_classe
    work = _history_naming_ana(c)
    suivi = c["grader"] / "hub" / "suivi"
    suivi.mkdir()
    _git(suivi, "init", "-q")
    _git(suivi, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(work), "eleves")
    with pytest.raises(ErasureError) as refused:
        _erase(c, "ana")
    store = str(suivi / ".git" / "modules" / "eleves")
    assert str(refused.value).count(store) == 1, str(refused.value)


@pytest.mark.slow
def test_her_class_list_in_the_history_of_the_teacher_s_notes_is_named_whatever_the_course_holds(
    petite_classe,
):
    """Review7: since 4ff091c an object of a repository in grader/ is not searched when the
    course's own repository holds the same object, whatever put it there: not only the
    course's history, but any file of hers git once stored. The teacher types ``git add -A``
    in the course's checkout by mistake, then ``git reset``: nothing committed (``git log
    --all -S ana``, the summary's advice, shows nothing), but git keeps the blob of her class
    list (grader/hub/classe.csv) in the course's store. Her notes (grader/hub/notes, her own
    repository, no clone of anything) held the same list, removed with ``git rm``: that
    history is no longer searched, the erasure says « Preuve faite », and the summary calls
    her notes « clone du dépôt du cours ». The command is started in the class's course as
    the teacher starts it (its checkout: the one ``course_history`` reads). Control: the same
    class, the course's store without that blob, names her notes' history."""
    import subprocess

    from erase_scenes import CLASS_LIST

    c = petite_classe
    course = c["grader"].parent
    _git(course, "init", "-q")
    (course / "LISEZMOI").write_text("Le cours.\n", encoding="utf-8")
    _git(course, "add", "LISEZMOI")
    _git(course, "commit", "-qm", "le cours")
    notes = _notes(c)
    _committed_then_removed(notes, "classe.csv", CLASS_LIST)
    control = _copy_class(c)
    said = _dry_run_in_two_gigabytes(control, "ana")
    assert "historique git à réécrire à la main" in said, said[-1500:]  # control
    listed = _class_list(c)  # grader/hub/classe.csv: the same bytes
    _git(course, "add", "-A")  # by mistake
    _git(course, "reset", "-q")
    listed.unlink()
    found = subprocess.run(
        ["git", "-C", str(course), "log", "--all", "--oneline", "-S", "ana"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert found.stdout == ""  # the summary's advice finds nothing in the course
    said = _dry_run_in_two_gigabytes(c, "ana")
    assert "historique git à réécrire à la main" in said, said[-1500:]


@pytest.mark.slow
def test_a_git_pointer_a_classmate_handed_in_never_blocks_every_erasure(petite_classe):
    """A ``.git`` file in Ben's TP folder (« gitdir: » a path of his own machine): followed, it
    would be « a repository git cannot read », named, and refuse the erasure of every learner;
    a learner's pointer leads to nothing of the class, so it is a file like any other."""
    c = petite_classe
    pointer = c["grader"] / "submitted" / "ben" / "oublier" / ".git"
    pointer.write_text("gitdir: /home/ben/projets/tp/.git/worktrees/oublier\n", encoding="utf-8")
    _assert_proved(c, "ana", "un .git rendu par Ben")


@pytest.mark.slow
def test_her_class_spreadsheet_in_the_history_of_the_teacher_s_notes_is_named(petite_classe):
    """Review8: ``_scan_git`` searches each object's bytes as they are (``binary_count``), not
    what they hold (``binary_hits``: a zip's members, a gzip's stream, a .pyc's strings), as
    every file of the class is searched. The teacher keeps her class spreadsheet in her notes
    (grader/hub/notes/classe.xlsx: a zip, its names deflate-compressed in
    ``xl/sharedStrings.xml``), then removes it as the erasure tells her (``git rm``, a commit):
    the history holds the spreadsheet, no word of it readable as bytes, and the erasure of
    ana says « Preuve faite ». Control: the same spreadsheet left in her notes' folder is
    named."""
    import io
    import zipfile

    from erase_scenes import CLASS_LIST

    names = "".join(
        f"<si><t>{cell}</t></si>" for line in CLASS_LIST.splitlines() for cell in line.split(",")
    )
    sheet = io.BytesIO()
    with zipfile.ZipFile(sheet, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("[Content_Types].xml", '<?xml version="1.0"?><Types/>')
        zf.writestr("xl/sharedStrings.xml", f'<?xml version="1.0"?><sst>{names}</sst>')
    c = petite_classe
    notes = _notes(c)
    (notes / "classe.xlsx").write_bytes(sheet.getvalue())
    assert b"ana" not in sheet.getvalue().lower()  # compressed: no word as bytes
    from grading.erase_learner import ErasureError

    with pytest.raises(ErasureError, match="classe.xlsx"):  # control: in her folder, named
        _erase(c, "ana")
    _git(notes, "add", "classe.xlsx")
    _git(notes, "commit", "-qm", "ma classe")
    _git(notes, "rm", "-q", "classe.xlsx")
    _git(notes, "commit", "-qm", "sans la liste")
    with pytest.raises(ErasureError, match="historique git"):
        _erase(c, "ana")


@pytest.mark.slow
def test_what_git_init_writes_is_no_mention_of_a_short_id(petite_classe):
    """Stop 56: git init writes English samples (hooks/*.sample, description, info/exclude):
    a learner « an » (An Nguyen) was named 13 times in the teacher's empty notes repository,
    her erasure refused. Control: a sample hook the teacher edited to name her is named."""
    from grading.erase_learner import ErasureError

    c = petite_classe
    _enrol(c, "an", "An", "Nguyen")
    notes = _notes(c, None)
    _assert_proved(_copy_class(c), "an", "les fichiers de git init")
    hook = notes / ".git" / "hooks" / "pre-commit.sample"
    hook.write_text(hook.read_text(encoding="utf-8") + "# relancer An Nguyen\n", encoding="utf-8")
    with pytest.raises(ErasureError, match="pre-commit.sample"):
        _erase(c, "an")


def test_a_name_the_course_ships_in_a_clone_s_index_is_the_course_s(tmp_path):
    """In a clone of the course in grader/, the index names the course's files (its sample
    « alice_en_dur.py »): a learner « alice » is not there. A name staged with a blob of the
    course's history is left out, any other is read. Control: the same name, another blob."""
    import subprocess

    from grading.privacy.learner_places import _index_names

    repo = tmp_path / "cours-2025"
    repo.mkdir()
    _git(repo, "init", "-q")
    (repo / "alice_en_dur.py").write_text("# l'exemple du cours\n", encoding="utf-8")
    (repo / "Alice Durand.txt").write_text("notes\n", encoding="utf-8")
    _git(repo, "add", ".")
    blob = subprocess.run(
        ["git", "rev-parse", ":alice_en_dur.py"], cwd=repo, capture_output=True, check=True
    ).stdout.strip()
    names, error = _index_names(repo / ".git", frozenset({blob}))
    assert not error and b"Alice Durand.txt" in names and b"alice_en_dur.py" not in names
    names, _ = _index_names(repo / ".git", frozenset())
    assert b"alice_en_dur.py" in names
