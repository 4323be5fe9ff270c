"""The class tools find the course from the folder they run in, as nbgrader does, never from
where their own files are: the package used here is the repository's grader/grading, the course
is a copy elsewhere (a hub instructor's copy, the demo course)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import unicodedata
from pathlib import Path

import nbformat
import pytest
from grading.classroom.paths import course_dirs, find_grader_dir
from grading.demo import demo_config
from grading_course import copy_course, damage_inside, tool_env
from helpers import REPO
from nbgrader.api import Gradebook

PY = sys.executable


@pytest.fixture(scope="module")
def course_template(tmp_path_factory) -> Path:
    """A course copy elsewhere with a gradebook holding two graded students."""
    grader = copy_course(tmp_path_factory.mktemp("modele") / "mon-cours")
    nb = nbformat.read(grader.parent / "solutions" / "oublier" / "oublier.ipynb", as_version=4)
    cells = {
        c.metadata.nbgrader["grade_id"]: c.metadata.nbgrader["points"]
        for c in nb.cells
        if c.metadata.get("nbgrader", {}).get("grade") and not c.metadata.nbgrader.get("solution")
    }
    with Gradebook(f"sqlite:///{grader / 'gradebook.db'}") as gb:
        gb.add_assignment("oublier")
        gb.add_notebook("oublier", "oublier")
        for grade_id, points in cells.items():
            gb.add_grade_cell(grade_id, "oublier", "oublier", max_score=points, cell_type="code")
        for student in ("ana", "ben"):
            gb.add_student(student)
            gb.add_submission("oublier", student)
            for grade_id, points in cells.items():
                grade = gb.find_grade(grade_id, "oublier", "oublier", student)
                grade.auto_score = 0 if student == "ben" else points
            gb.db.commit()
    return grader.parent


def _course_copy(course_template: Path, dest: Path) -> Path:
    """A fresh copy of the course folder, without its own grading package."""
    folder = Path(shutil.copytree(course_template, dest))
    shutil.rmtree(folder / "grader" / "grading")  # the tools used are the repository's
    return folder


@pytest.fixture
def course_folder(course_template, tmp_path) -> Path:
    """A fresh copy of the course folder for one test, without its own grading package."""
    return _course_copy(course_template, tmp_path / "mon-cours")


def _run_each(*commands: tuple[Path | str, ...]) -> list[subprocess.CompletedProcess]:
    """Each command (its folder, the tool's module, its arguments…) started as its own
    ``python -m grading.<tool>``, in its folder, as a user starts it. The package is the
    repository's (on PYTHONPATH), the courses are copies without one: a tool that found the
    course from its own files would find none."""
    env = {**tool_env(), "PYTHONPATH": str(REPO / "grader")}
    return [
        subprocess.run(
            [PY, "-m", str(module), *map(str, args)],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            stdin=subprocess.DEVNULL,
        )
        for cwd, module, *args in commands
    ]


def test_report_paths_come_from_the_current_folder_unless_given(course_template, tmp_path):
    """`python -m grading.rapport` (make rapport) from the course root and from its grader/
    folder finds the course's gradebook and writes beside it; outside a course, --grader-dir
    names it."""
    courses = {
        where: _course_copy(course_template, tmp_path / w)
        for w, where in (("a", "."), ("b", "grader"), ("c", "explicit"))
    }
    explicit = courses["explicit"] / "grader"
    runs = _run_each(
        (courses["."], "grading.rapport"),
        (courses["grader"] / "grader", "grading.rapport"),
        (tmp_path, "grading.rapport", "--grader-dir", explicit),
    )
    for where, proc in zip((".", "grader", "explicit"), runs, strict=True):
        assert proc.returncode == 0, (where, proc)
        out = courses[where] / "grader" / "rapport"
        assert (out / "rapport.html").is_file() and (out / "notes.csv").is_file()
        assert "2 élève(s), 2 avec un rendu" in proc.stdout and str(out) in proc.stdout, proc
        assert "ana" in (out / "notes.csv").read_text()
    assert not (tmp_path / "rapport").exists()


@pytest.mark.slow
def test_outside_a_course_the_tools_say_so_in_french(tmp_path):
    empty = tmp_path / "vide"
    empty.mkdir()
    modules = ("grading.rapport", "grading.autograde", "grading.feedback", "grading.demo")
    for module, proc in zip(modules, _run_each(*[(empty, m) for m in modules]), strict=True):
        assert proc.returncode == 2 and "Aucun nbgrader_config.py" in proc.stderr, (module, proc)


@pytest.mark.slow
def test_autograde_looks_for_submissions_in_the_course_it_runs_in(course_folder):
    other = course_folder.parent / "autre"
    shutil.copytree(course_folder, other)
    here, there = _run_each(
        (course_folder, "grading.autograde", "oublier"),
        (course_folder, "grading.autograde", "oublier", "--grader-dir", str(other / "grader")),
    )
    assert here.returncode == 2, here
    submitted = course_folder / "grader" / "submitted"
    assert f"Aucun rendu de « oublier » dans {submitted}" in here.stderr, here
    assert there.returncode == 2, there
    assert f"dans {other / 'grader' / 'submitted'}" in there.stderr, there


def test_course_dirs_read_nbgrader_s_configuration(course_folder):
    grader = find_grader_dir(course_folder)
    assert grader == (course_folder / "grader").resolve()
    assert find_grader_dir(grader) == grader
    dirs = course_dirs(grader)
    root = course_folder.resolve()
    assert dirs.root == root and dirs.source == root / "solutions"
    assert dirs.submitted == root / "grader" / "submitted"
    assert dirs.autograded == root / "grader" / "autograded"
    assert dirs.feedback == root / "grader" / "feedback"
    assert dirs.release == root / "notebooks"
    assert dirs.db_url == f"sqlite:///{grader / 'gradebook.db'}"


def test_the_demo_course_has_its_own_folders_and_the_course_s_settings(course_folder):
    grader = (course_folder / "grader").resolve()
    demo = grader / "demo"
    demo.mkdir()
    config = demo_config(grader / "nbgrader_config.py", demo, course_folder.resolve())
    (demo / "nbgrader_config.py").write_text(config)
    dirs = course_dirs(demo)
    assert dirs.root == course_folder.resolve() and dirs.source == dirs.root / "solutions"
    for folder in (dirs.submitted, dirs.autograded, dirs.feedback, dirs.release):
        assert folder.parent == demo
    assert dirs.db_url == f"sqlite:///{demo / 'gradebook.db'}"


def test_a_damaged_gradebook_is_refused_in_french_by_every_command(graded_class_copy):
    """A truncated gradebook (dpo attack, item 8): every command that reads it says so in one
    French sentence with the file and what to do, exit 2, before nbgrader or SQLAlchemy (a
    traceback, an sqlalche.me address, « 0 en échec » exit 0); `make sauvegarde`'s own check
    (gradebook_counts), so the same words. The control: the same commands on the whole
    file work (the graded class itself was graded, its feedback and report written by them)."""
    from grading_course import grading

    grader = graded_class_copy.grader
    export = grading(grader, "export")  # the control, before the damage
    assert export.returncode == 0, export.stdout + export.stderr
    db = grader / "gradebook.db"
    whole = db.read_bytes()
    with open(db, "r+b") as file:
        file.truncate(db.stat().st_size * 2 // 5)
    damaged = (
        f"le carnet de notes est illisible ({db}\u00a0: fichier abîmé, SQLite\u00a0: "
        "database disk image is malformed)"
    )
    restore = "\u00a0; restaurez la dernière sauvegarde (make restauration SAUVEGARDE=…"
    commands = {
        ("autograde", "oublier"): "Rien n'a été noté",
        ("roster_csv", "eleves.csv"): "Rien n'a été inscrit",
        ("learner_export", "ana", "--eleves", "eleves.csv"): "Aucune donnée exportée",
        ("feedback", "oublier"): "Aucune page de retour écrite",
        ("rapport", "oublier"): "Pas de rapport de «\u00a0oublier\u00a0»",
        ("export",): "Aucune note exportée",
    }
    before = db.read_bytes()
    for command, done in commands.items():
        proc = grading(grader, *command)
        said = proc.stdout + proc.stderr
        assert proc.returncode == 2, (command, said)
        assert f"✘ {done}\u00a0: {damaged}{restore}" in proc.stderr, (command, said)
        assert "Traceback" not in said and "sqlalche.me" not in said, (command, said)
    assert db.read_bytes() == before  # refused, not touched
    assert not (grader / "exports").exists()
    # Attack (stop 53): a page damaged inside, where a count still reads, let export, the
    # report and the learner's export run, status 0; SQLite's own check now stops them too
    db.write_bytes(whole)
    damage_inside(db)
    for command in (
        ("export",),
        ("rapport", "oublier"),
        ("learner_export", "ana", "--eleves", "eleves.csv"),
    ):
        proc = grading(grader, *command)
        said = proc.stdout + proc.stderr
        assert (
            proc.returncode == 2
            and "fichier abîmé, SQLite\u00a0: database disk image is malformed (" in said
        ), said


def _use_gradebook(grader: Path, url: str) -> None:
    """The course's nbgrader_config.py with `url` as its gradebook (the last word wins)."""
    config = grader / "nbgrader_config.py"
    settings = config.read_text(encoding="utf-8").split("\n# test: db_url\n")[0]
    config.write_text(f"{settings}\n# test: db_url\nc.CourseDirectory.db_url = {url!r}\n")


@pytest.mark.slow
def test_a_gradebook_on_postgresql_is_read_as_its_file_would_be(course_folder, postgres_cluster):
    """Issue 35, one gradebook reader: a gradebook on a server said nothing (`make grade` with
    nobody registered went on to nbgrader) and its students were no registered ids. On a real
    PostgreSQL, without writing: a database without nbgrader's tables is no gradebook yet
    (`make students` may make it), one registering nobody stops `make grade` with the SQLite
    file's words, and its students are the same registered ids as the same class's file (NFC)."""
    from grading.classroom.class_places import registered_ids
    from grading.classroom.gradebook import gradebook_problem, server_name

    grader = course_folder / "grader"
    url = postgres_cluster.creer_base("carnet_lecteur").replace("+asyncpg", "")
    _use_gradebook(grader, url)
    dirs = course_dirs(grader)
    assert dirs.db_url == url
    assert gradebook_problem(dirs, missing_ok=True) is None  # make students: nbgrader makes it
    missing = gradebook_problem(dirs)
    assert missing is not None
    assert missing.startswith(f"le carnet de notes est introuvable ({server_name(url)})\u00a0; ")
    assert "make students ELEVES=grader/eleves.csv" in missing
    with Gradebook(url):  # nbgrader's tables, nobody registered
        pass
    (nobody,) = _run_each((grader, "grading.autograde", "oublier"))
    assert nobody.returncode == 2, nobody.stdout + nobody.stderr
    assert (
        "✘ Rien n'a été noté\u00a0: aucun élève n'est inscrit au carnet de notes "
        f"({server_name(url)})\u00a0: inscrivez d'abord la classe, make students "
        "ELEVES=grader/eleves.csv (un dossier de submitted/ n'inscrit personne)."
    ) in nobody.stderr
    assert not (grader / "autograded").exists()
    chloe = unicodedata.normalize("NFD", "chloé")  # a row made from a macOS folder's name
    with Gradebook(url) as gb:
        for sid in ("ana", "ben", chloe):
            gb.add_student(sid)
    assert gradebook_problem(course_dirs(grader), empty_ok=False) is None  # the control
    on_server = registered_ids(course_dirs(grader), ["dan"])
    _use_gradebook(grader, f"sqlite:///{grader / 'gradebook.db'}")
    with Gradebook(course_dirs(grader).db_url) as gb:
        gb.add_student(chloe)
    assert on_server == {"ana", "ben", "chloé", "dan"}
    assert registered_ids(course_dirs(grader), ["dan"]) == on_server


@pytest.mark.slow
def test_a_server_gradebook_that_cannot_be_read_stops_every_command_without_its_password(
    course_folder, postgres_cluster
):
    """A gradebook on a server that cannot be read (here a database that does not exist, its
    URL with a password) stops `make grade` and `make export` in French before nbgrader (a
    traceback, an sqlalche.me address), never showing the password; the registered ids are
    then the roster's alone, as with a damaged file."""
    from grading.classroom.class_places import registered_ids
    from grading.classroom.gradebook import server_name

    grader = course_folder / "grader"
    url = postgres_cluster.creer_base("carnet_mot_de_passe").replace("+asyncpg", "")
    url = url.replace("postgres@", "prof:S3cret@").replace("carnet_mot_de_passe", "absente")
    _use_gradebook(grader, url)
    assert server_name(url) == "postgresql:///absente"  # never its password
    commands = {("autograde", "oublier"): "Rien n'a été noté", ("export",): "Aucune note exportée"}
    runs = _run_each(*[(grader, f"grading.{c[0]}", *c[1:]) for c in commands])
    for (command, done), proc in zip(commands.items(), runs, strict=True):
        said = proc.stdout + proc.stderr
        assert proc.returncode == 2, (command, said)
        assert (
            f"✘ {done}\u00a0: le carnet de notes est illisible ({server_name(url)}\u00a0: "
        ) in proc.stderr, (command, said)
        assert "\u00a0; vérifiez le serveur et CourseDirectory.db_url" in proc.stderr
        assert "S3cret" not in said and "Traceback" not in said and "sqlalche.me" not in said
    assert registered_ids(course_dirs(grader), ["dan"]) == {"dan"}


@pytest.mark.slow
def test_a_password_holding_a_question_mark_is_never_shown_when_the_server_gradebook_fails(
    course_folder, postgres_cluster
):
    """A password typed with a « ? » in it (« S3c?ret », which SQLAlchemy and libpq read as the
    password: everything before the host's « @ ») is cut at that « ? » by ``server_name``, which
    then shows « postgresql://prof:S3c » as the server: `make export` prints half the password
    (and no host). The control: the same password with a « # » is never shown."""
    grader = course_folder / "grader"
    base = postgres_cluster.creer_base("carnet_point_d_interrogation").replace("+asyncpg", "")
    base = base.replace("carnet_point_d_interrogation", "absente")
    runs = {}
    for secret in ("S3c#ret", "S3c?ret"):
        _use_gradebook(grader, base.replace("postgres@", f"prof:{secret}@"))
        (proc,) = _run_each((grader, "grading.export"))
        runs[secret] = proc.stdout + proc.stderr
        assert proc.returncode == 2, runs[secret]
        assert "le carnet de notes est illisible (" in proc.stderr, runs[secret]
    assert "S3c" not in runs["S3c#ret"]  # the control: the message names the server alone
    assert "S3c" not in runs["S3c?ret"], runs["S3c?ret"]


@pytest.mark.slow
def test_a_mistyped_server_url_never_shows_its_password(course_folder):
    """Review3: on a French keyboard « @ » is AltGr+à; without AltGr the teacher types
    ``postgresql://prof:S3cretàlocalhost/cours``. SQLAlchemy reads « prof » as the host and
    « S3cretàlocalhost » as its port: `make export` refuses in French (« adresse illisible »),
    but ``server_name`` finds no « @ » and shows the whole URL, password included (the same
    with a « ; » or a space for the « @ »). Control: a mistyped port after the « @ »
    (« localhost:54x ») is refused without it."""
    grader = course_folder / "grader"
    said = {}
    for url in (
        "postgresql://prof:S3cret@localhost:54x/cours",
        "postgresql://prof:S3cretàlocalhost/cours",
        "postgresql://prof:S3cret;localhost/cours",
    ):
        _use_gradebook(grader, url)
        (proc,) = _run_each((grader, "grading.export"))
        said[url] = proc.stdout + proc.stderr
        assert proc.returncode == 2 and "adresse illisible" in proc.stderr, said[url]
    shown = [url for url, text in said.items() if "S3cret" in text]
    assert "postgresql://prof:S3cret@localhost:54x/cours" not in shown, said  # the control
    assert shown == [], said


@pytest.mark.slow
def test_a_command_runs_the_teacher_s_configuration_once(course_folder):
    """nbgrader_config.py is the teacher's program: a data export, an erasure's scan and a
    backup read it through course_dirs, which keeps what it read (CourseDirs.config); each of
    them ran it a second time to read one more setting."""
    config = course_folder / "grader" / "nbgrader_config.py"
    runs = course_folder / "lectures.txt"
    with config.open("a", encoding="utf-8") as fh:
        fh.write(f"\nwith open({str(runs)!r}, 'a') as _fh:\n    _fh.write('lu\\n')\n")
    roster = course_folder / "eleves.csv"
    roster.write_text("id,nom\nana,Exemple\nben,Exemple\n", encoding="utf-8")
    commands = (
        ("grading.learner_export", "ana", "--eleves", roster),
        ("grading.erase_learner", "ana", "--eleves", roster),
        ("grading.backup", "sauvegarder", "--eleves", roster),
    )
    for module, *args in commands:
        runs.unlink(missing_ok=True)
        (proc,) = _run_each((course_folder, module, *args))
        assert proc.returncode == 0, (module, proc.stdout[-2000:], proc.stderr[-2000:])
        assert runs.read_text(encoding="utf-8") == "lu\n", module
