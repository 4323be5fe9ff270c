"""What the course ships (privacy/course_files.py, learner_places ``_scan_class``): its own files
are never a mention, with or without git; a teacher's file beside them, a course file she
changed (modified, staged, committed, hidden from git, in a clone git will not read) is
searched; the list of the course's files itself (written by ``make course-files``)."""

from __future__ import annotations

import importlib.util
import os
import py_compile
import re
import shutil

import pytest
from erase_scenes import (
    _assert_proved,
    _class_list,
    _clone,
    _copy_class,
    _enrol,
    _erase,
    _git,
    _make_from,
)

pytestmark = [pytest.mark.timeout(300)]


@pytest.mark.slow
def test_a_course_without_git_keeps_its_own_text_out_of_the_mentions(petite_classe):
    """Review, point 1: a course downloaded as a zip has no .git, so its README and grader.mk
    counted as files outside the class's data folders; erasing « ana » (an example id of the
    README) was refused, the teacher told to delete the README. What the course ships is
    never a mention, with or without git; a teacher's notes naming her still are (control)."""
    from helpers import REPO

    c = petite_classe
    grader, course = c["grader"], c["grader"].parent
    shutil.copy(REPO / "grader" / "README.md", grader / "README.md")
    assert not (course / ".git").exists()
    readme = (grader / "README.md").read_bytes()
    assert re.search(rb"\bana\b", readme)  # the README names « ana » as an example
    notes = grader / "notes-prof.txt"  # the teacher's own notes, not in a class folder
    notes.write_text("Ana Martin : à relancer.\n", encoding="utf-8")
    common = ("oublier-eleve", "ID=ana", "ELEVES=grader/eleves.csv", "TEMOIN=cyr")
    common += (f"ECHANGE={c['exchange']}",)
    proc = _make_from(c, "", *common)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "notes-prof.txt" in proc.stdout, proc.stdout
    shipped = ("README.md", "grader.mk", "Makefile")
    assert not [line for line in proc.stdout.splitlines() if line.endswith(shipped)], proc.stdout
    proc = _make_from(c, "", *common, "CONFIRMER=1")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "notes-prof.txt" in proc.stderr and "README" not in proc.stderr, proc.stderr
    notes.unlink()
    proc = _make_from(c, "", *common, "CONFIRMER=1")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Preuve faite" in proc.stdout
    assert (grader / "README.md").read_bytes() == readme


def test_what_the_course_ships_in_grader_is_every_file_git_tracks_there():
    """The erasure knows the course's own files by their content (course_files.txt, with or
    without git): a file the course ships in grader/ must be listed as it is, or an example id
    in it would stop every erasure of that learner; a file changed or gone must change or leave
    the list, or a teacher's file of that content would not be searched. To write it again:
    ``make course-files``."""
    from grading.privacy.course_files import LIST, listing
    from helpers import REPO

    assert LIST.read_text(encoding="utf-8") == listing(REPO / "grader")


@pytest.mark.slow
def test_a_teachers_file_beside_what_a_course_without_git_ships_is_searched(petite_classe):
    """Review (stop 42, left): in a course downloaded as a zip, what the course ships at the
    top of grader/ was never searched, so a class list the teacher keeps beside the hub's
    recipes, grader/hub/classe.csv naming ana, got « Preuve faite ». The course's list of its
    own files tells them apart: hers is named for the teacher; the course's own text there
    (ADMIN.md names « ana ») stays out (control)."""
    from grading.erase_learner import ErasureError
    from helpers import REPO

    c = petite_classe
    grader = c["grader"]
    assert not (grader.parent / ".git").exists()
    (grader / "hub").mkdir(exist_ok=True)
    shutil.copy(REPO / "grader" / "hub" / "ADMIN.md", grader / "hub" / "ADMIN.md")
    assert re.search(rb"\bana\b", (grader / "hub" / "ADMIN.md").read_bytes())
    kept = _class_list(c)
    with pytest.raises(ErasureError, match="classe.csv"):
        _erase(c, "ana")
    assert (grader / "submitted" / "ana").is_dir()  # nothing erased while she remains there
    kept.unlink()
    assert not _erase(c, "ana").failures


@pytest.mark.slow
def test_a_teachers_file_inside_a_shipped_folder_of_a_git_clone_is_searched(petite_classe):
    """Review (attack2): the folders the course ships (grader/hub, grader/templates…) were
    never searched, so a class list the teacher keeps beside the hub's recipes (ADMIN.md runs
    ``cours-roster verifier classe.csv``), grader/hub/classe.csv naming ana, got « Preuve
    faite ». In a git clone what git does not track there is the teacher's: searched, named
    for the teacher; the course's own files there (ADMIN.md names « ana ») stay out."""

    import py_compile

    from grading.erase_learner import ErasureError
    from helpers import REPO

    c = petite_classe
    grader, course = c["grader"], c["grader"].parent
    (grader / "hub").mkdir(exist_ok=True)
    shutil.copy(REPO / "grader" / "hub" / "ADMIN.md", grader / "hub" / "ADMIN.md")
    _clone(course, "grader/hub", "grader/templates")
    assert re.search(rb"\bana\b", (grader / "hub" / "ADMIN.md").read_bytes())
    # untracked, the course's: roster.py as Python compiles it (its header names its source)
    py_compile.compile(str(grader / "hub" / "roster.py"), doraise=True)
    checkpoint = grader / "hub" / ".ipynb_checkpoints" / "ADMIN-checkpoint.md"  # ADMIN.md opened
    checkpoint.parent.mkdir()  # in JupyterLab: its copy, the course's text
    shutil.copy(grader / "hub" / "ADMIN.md", checkpoint)
    kept = _class_list(c)
    with pytest.raises(ErasureError, match="classe.csv"):
        _erase(c, "ana")
    assert (grader / "submitted" / "ana").is_dir()  # nothing erased while she remains there
    kept.unlink()  # the control: without the teacher's file, the course's own text is no mention
    assert not _erase(c, "ana").failures


def test_a_course_file_the_teacher_changed_and_a_teachers_script_are_searched(petite_classe):
    """Review (stop 43): in a clone, a file the course ships that the teacher changed (a note
    naming ana added to nbgrader_config.py) and a script of the teacher's (grader/notes.py: every
    .py outside the data folders counted as the course's code) were never searched: « Preuve
    faite » while they named her. Both are named for the teacher now; the control: the same
    files as the course ships them, and no script, are no mention."""

    from grading.erase_learner import ErasureError

    c = petite_classe
    grader, course = c["grader"], c["grader"].parent
    config = grader / "nbgrader_config.py"
    _clone(course, "grader/nbgrader_config.py")
    shipped = config.read_bytes()
    assert not re.search(rb"\bana\b", shipped)
    config.write_bytes(shipped + b"\n# ana : tiers-temps, voir avec la vie scolaire\n")
    script = grader / "notes.py"
    script.write_text('BONUS = {"ana": 2}\n', encoding="utf-8")
    with pytest.raises(ErasureError) as refused:
        _erase(c, "ana")
    assert "nbgrader_config.py" in str(refused.value) and "notes.py" in str(refused.value)
    assert (grader / "submitted" / "ana").is_dir()  # nothing erased while she remains there
    config.write_bytes(shipped)  # the control: the course's file as shipped, no script
    script.unlink()
    assert not _erase(c, "ana").failures


@pytest.mark.slow
def test_a_course_file_the_teacher_changed_and_committed_is_still_searched(petite_classe):
    """Review of 57b1f0d: a file the course ships that the teacher changed is searched only
    while git sees it modified (``git ls-files -m``: the working tree against the index). A
    teacher who keeps their class in their own clone commits their changes (a note naming ana
    in nbgrader_config.py, a script grader/notes.py): both are then « the course's files, as git
    has them », never searched, and ``make oublier-eleve ID=ana CONFIRMER=1`` erases her and says
    « Preuve faite » while both still name her. The positive control: the same files, changed
    but not yet committed, are named by the dry run."""

    from grading_course import grading

    c = petite_classe
    grader, course = c["grader"], c["grader"].parent
    config = grader / "nbgrader_config.py"
    _clone(course, "grader/nbgrader_config.py")
    config.write_bytes(config.read_bytes() + b"\n# ana : tiers-temps, voir avec la vie scolaire\n")
    base = ("erase_learner", "--eleves", str(c["roster"]), "--echange", str(c["exchange"]))
    # positive control: changed, not committed, the dry run names it
    dry = grading(grader, *base, "--temoin", "cyr", "--", "ana")
    assert "nbgrader_config.py" in dry.stdout + dry.stderr, dry.stdout + dry.stderr
    # the teacher commits their class's settings and a script of theirs
    (grader / "notes.py").write_text('BONUS = {"ana": 2}\n', encoding="utf-8")
    _git(course, "add", "grader/notes.py")
    _git(course, "commit", "-qam", "ma classe")
    proc = grading(grader, *base, "--temoin", "cyr", "--confirmer", "--", "ana")
    out = proc.stdout + proc.stderr
    assert re.search(rb"\bana\b", config.read_bytes())  # she is still named there
    assert "nbgrader_config.py" in out and "notes.py" in out, out
    assert proc.returncode != 0, out
    assert (grader / "submitted" / "ana").is_dir()  # nothing erased while she remains there


@pytest.mark.slow
def test_a_class_list_beside_the_hubs_recipes_is_searched_when_git_will_not_answer(
    petite_classe,
):
    """Found in review of 57b1f0d: what the course ships is told from the teacher's files by
    ``git ls-files``; when git refuses to answer (a clone owned by the teacher's account, the
    erasure run by root without sudo: « detected dubious ownership », exit 128), ``_tracked``
    returns nothing and the scan takes the clone for a zip download: nothing in grader/hub is
    searched, and ``make oublier-eleve ID=ana CONFIRMER=1`` says « Preuve faite » while the
    class list the teacher keeps there (grader/hub/classe.csv) still names her. The control:
    the same clone owned by the user who runs the erasure names classe.csv."""
    import subprocess

    from grading_course import grading
    from helpers import REPO

    if os.geteuid() != 0:
        pytest.skip("root gives the clone to another account (chown)")
    c = petite_classe
    grader, course = c["grader"], c["grader"].parent
    (grader / "hub").mkdir(exist_ok=True)
    shutil.copy(REPO / "grader" / "hub" / "ADMIN.md", grader / "hub" / "ADMIN.md")
    _clone(course, "grader/hub")
    kept = _class_list(c)
    base = ("erase_learner", "--eleves", str(c["roster"]), "--echange", str(c["exchange"]))
    base += ("--temoin", "cyr")
    dry = grading(grader, *base, "--", "ana")  # the control: the clone is root's own
    assert "hub/classe.csv" in dry.stdout, dry.stdout + dry.stderr
    subprocess.run(["chown", "-R", "4242:4242", str(course)], check=True)  # the teacher's
    proc = grading(grader, *base, "--confirmer", "--", "ana")
    out = proc.stdout + proc.stderr
    assert kept.is_file() and b"ana.martin" in kept.read_bytes()  # she is still there
    assert "classe.csv" in out, out
    assert proc.returncode != 0, out


def test_a_course_file_the_teacher_changed_and_staged_is_searched(petite_classe):
    """Review2: in a clone, a course file the teacher changed is searched only while git says
    it is modified in the work tree (``git ls-files -m``): once the teacher runs ``git add``
    (or commits the change in her fork), the note naming ana in nbgrader_config.py is « as git
    has it » and never searched, « Preuve faite » while it names her. The README promises « dans
    un clone git, un fichier du cours que vous avez modifié (une note ajoutée à
    nbgrader_config.py) l'est aussi ». Control: the same note unstaged is named."""
    from grading.erase_learner import ErasureError

    c = petite_classe
    grader, course = c["grader"], c["grader"].parent
    config = grader / "nbgrader_config.py"
    _clone(course, "grader")
    shipped = config.read_bytes()
    assert not re.search(rb"\bana\b", shipped)
    config.write_bytes(shipped + b"\n# ana : tiers-temps, voir avec la vie scolaire\n")
    with pytest.raises(ErasureError, match="nbgrader_config.py"):  # control: unstaged, named
        _erase(c, "ana")
    _git(course, "add", "grader/nbgrader_config.py")  # the same change, staged
    with pytest.raises(ErasureError, match="nbgrader_config.py"):
        _erase(c, "ana")
    assert (grader / "submitted" / "ana").is_dir()  # nothing erased while she remains there


def test_a_class_list_the_teacher_committed_in_her_clone_is_searched(petite_classe):
    """Review2: in a clone, « the course's files » are whatever git tracks, so a class list the
    teacher commits in her own fork (grader/hub/classe.csv, kept with the hub's recipes as
    ADMIN.md shows) is taken for the course's and never searched: « Preuve faite » while it
    names ana. The course's own list (COURSE_FILES) does not name it. Control: the same file
    untracked is named."""
    from grading.erase_learner import ErasureError
    from grading.privacy.course_files import LIST

    c = petite_classe
    grader, course = c["grader"], c["grader"].parent
    _class_list(c)
    assert "  hub/classe.csv\n" not in LIST.read_text(encoding="utf-8")
    _clone(course, "grader/grading", "grader/hub/roster.py", "grader/nbgrader_config.py")
    with pytest.raises(ErasureError, match="classe.csv"):  # control: untracked, named
        _erase(c, "ana")
    _git(course, "add", "grader/hub/classe.csv")
    _git(course, "commit", "-qm", "ma classe")
    with pytest.raises(ErasureError, match="classe.csv"):
        _erase(c, "ana")
    assert (grader / "submitted" / "ana").is_dir()


def test_a_teachers_file_in_a_shipped_folder_is_searched_when_her_repo_tracks_one_file(
    petite_classe,
):
    """Review2: a course downloaded as a zip, then kept in the teacher's own git repository
    where she versions only her settings (grader/nbgrader_config.py): git's list, not
    COURSE_FILES, now decides, and every shipped entry git does not track (hub/, templates/…)
    is skipped whole, so her class list grader/hub/classe.csv naming ana gets « Preuve faite ».
    Control: without that repository (the zip as downloaded) the same file is named."""
    from grading.erase_learner import ErasureError

    c = petite_classe
    grader, course = c["grader"], c["grader"].parent
    _class_list(c)
    with pytest.raises(ErasureError, match="classe.csv"):  # control: no git, named
        _erase(c, "ana")
    _clone(course, "grader/nbgrader_config.py")
    with pytest.raises(ErasureError, match="classe.csv"):
        _erase(c, "ana")
    assert (grader / "submitted" / "ana").is_dir()


@pytest.mark.slow
def test_a_damaged_list_of_the_course_files_is_refused_in_french(petite_classe):
    """Review2: in a course without git, the erasure reads COURSE_FILES as UTF-8; a damaged
    list (bytes that are not UTF-8, a folder in its place) stopped `make oublier-eleve` with a
    Python traceback (UnicodeDecodeError, IsADirectoryError) where the teacher must read
    French. Control: a missing list is refused in French already."""
    c = petite_classe
    grader = c["grader"]
    listed = grader / "grading" / "privacy" / "course_files.txt"
    good = listed.read_bytes()
    common = ("oublier-eleve", "ID=ana", "ELEVES=grader/eleves.csv", "TEMOIN=cyr")
    common += (f"ECHANGE={c['exchange']}",)
    listed.unlink()
    proc = _make_from(c, "", *common)
    assert proc.returncode == 2 and "course_files.txt" in proc.stderr, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    listed.write_bytes(good.replace(b"README.md", "R\u00c9ADME.md".encode("latin-1")))
    proc = _make_from(c, "", *common)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr and "✘" in proc.stderr, proc.stderr
    listed.unlink()
    listed.mkdir()
    proc = _make_from(c, "", *common)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr and "✘" in proc.stderr, proc.stderr


def test_a_changed_course_file_is_searched_in_a_clone_owned_by_another_account(petite_classe):
    """Review2: git refuses to read a clone owned by another account (« dubious ownership »,
    git 2.35.2 and later: a class folder of the shared grading account, the erasure run by root
    or the teacher); ``git ls-files`` then fails, the erasure falls back on COURSE_FILES as for a
    zip, and a course file the teacher changed (a note naming ana in nbgrader_config.py) is no
    longer searched: « Preuve faite » in a clone, where the README promises it is named.
    Control: the same clone owned by the account that runs the erasure names it."""

    from grading.erase_learner import ErasureError

    c = petite_classe
    grader, course = c["grader"], c["grader"].parent
    config = grader / "nbgrader_config.py"
    _clone(course, "grader")
    config.write_bytes(config.read_bytes() + b"\n# ana : tiers-temps\n")
    with pytest.raises(ErasureError, match="nbgrader_config.py"):  # control: her own clone
        _erase(c, "ana")
    for path in [course, *course.rglob("*")]:
        os.lchown(path, 4242, 4242)  # the shared grading account's clone (as root, as make test)
    with pytest.raises(ErasureError, match="nbgrader_config.py"):
        _erase(c, "ana")
    assert (grader / "submitted" / "ana").is_dir()


def test_the_documented_way_to_write_the_course_files_list_keeps_an_accented_name(tmp_path):
    """Review2: the first recipe for the list, ``git ls-files > …``, quoted a name that is not
    ASCII (core.quotePath: ``"submissions/\\303\\251l\\303\\250ve.md"``), so a course file with
    an accent was listed under a name no file has. The recipe CONTRIBUTING.md gives now,
    ``make course-files``, lists each file by its own name, with the
    digest of its content, line ends read as LF."""
    import hashlib

    from grading.privacy.course_files import listing
    from helpers import REPO

    text = (REPO / "CONTRIBUTING.md").read_text(encoding="utf-8")
    assert "`make course-files`" in text
    grader = tmp_path / "depot" / "grader"
    (grader / "submissions").mkdir(parents=True)
    (grader / "submissions" / "élève.md").write_bytes(b"ana\r\n")
    (grader / "README.md").write_text("cours\n", encoding="utf-8")
    _git(grader.parent, "init", "-q")
    _git(grader.parent, "add", "grader")
    lf = hashlib.sha256(b"ana\n").hexdigest()
    readme = hashlib.sha256(b"cours\n").hexdigest()
    assert listing(grader) == f"{readme}  README.md\n{lf}  submissions/élève.md\n"


def test_a_course_file_the_teacher_keeps_out_of_her_commits_is_searched(petite_classe):
    """Review2: the usual way to keep local settings out of one's commits, ``git update-index
    --skip-worktree grader/nbgrader_config.py`` (or ``--assume-unchanged``), hides the change
    from ``git ls-files -m`` too: her note naming ana there is never searched, « Preuve faite ».
    Control: the same change without the flag is named."""
    from grading.erase_learner import ErasureError

    c = petite_classe
    grader, course = c["grader"], c["grader"].parent
    config = grader / "nbgrader_config.py"
    _clone(course, "grader")
    config.write_bytes(config.read_bytes() + b"\n# ana : tiers-temps\n")
    with pytest.raises(ErasureError, match="nbgrader_config.py"):  # control: named
        _erase(c, "ana")
    _git(course, "update-index", "--skip-worktree", "grader/nbgrader_config.py")
    with pytest.raises(ErasureError, match="nbgrader_config.py"):
        _erase(c, "ana")
    assert (grader / "submitted" / "ana").is_dir()


@pytest.mark.slow
def test_the_course_s_own_comment_in_a_config_she_adapted_is_no_mention(petite_classe):
    """Review3: the grading guide tells the teacher to adapt nbgrader_config.py (the zip rule
    ``FileNameCollectorPlugin.named_regexp`` to her platform's format). The file then differs
    from the course's, so it is searched whole, and the course's own comment in it (« `nbgrader
    submit --student bob` run by eve ») was a mention of a learner « eve »: her erasure was
    refused, nbgrader_config.py « à corriger à la main », though the teacher wrote nothing
    about her. The file the guide tells her to adapt names no learner. Control: with the file
    as shipped, eve's erasure is proved."""

    c = petite_classe
    grader = c["grader"]
    _enrol(c, "eve", "Ève", "Roux")
    config = grader / "nbgrader_config.py"
    shipped = config.read_text(encoding="utf-8")
    assert not _erase(_copy_class(c), "eve").failures  # control: the course's file as shipped
    rule = 'c.FileNameCollectorPlugin.named_regexp = r".*/(?P<student_id>[^/]+)/(?P<file_id>'
    assert rule in shipped
    # her platform names the files <id>_oublier.ipynb
    adapted = re.sub(
        r"c\.FileNameCollectorPlugin\.named_regexp = .*",
        lambda _: (
            'c.FileNameCollectorPlugin.named_regexp = r".*/(?P<student_id>[^/_]+)_'
            '(?P<file_id>[^/]+\\.ipynb)$"'
        ),
        shipped,
    )
    config.write_text(adapted, encoding="utf-8")
    _assert_proved(c, "eve", "le commentaire du cours")


@pytest.mark.slow
def test_the_class_s_own_copy_of_the_course_s_file_list_never_blocks_an_erasure(petite_classe):
    """Review6: the class scan leaves out the list of the course's files (``LIST``) of the code
    that runs, not the class folder's own copy. Run with ``--grader-dir`` on a class folder
    that holds the course (as every test of this module does), its
    ``grading/privacy/course_files.txt`` (never in itself) is a teacher's file: it names
    ``grading/demo.py``, ``hub/…``, ``grading/rapport.py``, so the erasure of « demo » (the
    account a teacher makes to try the hub, enrolled as a learner) is refused on a file of
    the course. Control: « cyr », whose id no file of the course holds, is erased.

    Fresh-clone run, stop 61: ``grading/__pycache__/demo.cpython-311.pyc``, which Python writes
    at the teacher's first ``make demo-grading``, refused it too (« nom à changer à la main »):
    a compiled course file was left out of the search, not its name. Compiled here, as in a
    teacher's folder, whatever the environment's PYTHONDONTWRITEBYTECODE."""

    c = petite_classe
    demo = c["grader"] / "grading" / "demo.py"
    py_compile.compile(str(demo), importlib.util.cache_from_source(str(demo)), doraise=True)
    _enrol(c, "demo", "Compte", "Démonstration")
    folder = c["grader"] / "submitted" / "demo" / "oublier"
    folder.mkdir(parents=True)
    (folder / "oublier.ipynb").write_text('{"copie de": "demo"}', encoding="utf-8")
    listed = c["grader"] / "grading" / "privacy" / "course_files.txt"
    assert re.search(rb"\bgrading/demo\.py\b", listed.read_bytes())
    assert not _erase(_copy_class(c), "cyr", control="ben").failures  # control
    _assert_proved(c, "demo", "la liste des fichiers du cours")
