"""The shared-database lab, graded if the teacher wants it: `nbgrader generate_assignment` then
`nbgrader autograde oublier_partage` on the sample answers of grader/submissions/partage, each on
a real PostgreSQL the grader starts for it, with the sandbox; scores as attendus.json says."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat
import pytest
from grading_course import copy_course, nbgrader
from helpers import REPO, in_empty_tmp
from learner_env import learner_env
from nbgrader.api import Gradebook
from partage_attacks import LIMIT_ATTACKS, SAMPLES, SMALL

from course.labo.partage import EXAMPLE, PARTAGE_TESTS, evaluate_partage

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1200)]

ASSIGNMENT = "oublier_partage"


def _expected() -> dict[str, dict]:
    return json.loads((SAMPLES / "attendus.json").read_text(encoding="utf-8"))


def _submission(release: Path, text: str) -> nbformat.NotebookNode:
    nb = nbformat.read(release, as_version=4)
    (cell,) = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == ASSIGNMENT]
    cell.source = text.rstrip("\n")
    return nb


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


@pytest.fixture
def clusters(monkeypatch) -> Path:
    """The grading clusters' folder of this test alone (COURS_PARTAGE_DOSSIER), inside the
    default one, with its mode: nothing may be left in it."""
    from course.labo.partage_base import FOLDER_ENV, clusters_root

    monkeypatch.delenv(FOLDER_ENV, raising=False)
    root = clusters_root()
    folder = Path(tempfile.mkdtemp(prefix="essai-", dir=root))
    folder.chmod(root.stat().st_mode & 0o777)
    monkeypatch.setenv(FOLDER_ENV, str(folder))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def _instructor_bin(environment: str) -> Path:
    """The bin/ of what grades: the venv of `make setup` (the lab set and the course), or the
    hub's course environment (requirements/hub.txt, as install-course-env.sh makes it)."""
    if environment == "make setup":
        return learner_env().bin
    from exchange_class import readable_course_env  # this folder's (conftest.py puts it first)

    return readable_course_env() / "bin"


# which environment's nbgrader grades which sample (each a full score, a zero and more): every
# sample once, in one nbgrader run per environment (a PostgreSQL per submission costs seconds)
GRADED_IN = {
    "make setup": ("complete", "ebauche", "sans_vacuum"),
    "hub": ("evasion", "disque_plein", "reglages_de_role"),
}


@pytest.mark.parametrize(
    "environment", ["make setup", pytest.param("hub", marks=[pytest.mark.hub])]
)
def test_every_sample_gets_its_expected_score_on_a_real_postgres(environment, tmp_path, clusters):
    expected = _expected()
    assert set(expected) == {p.stem for p in SAMPLES.glob("*.py")}
    assert sorted(expected) == sorted(n for names in GRADED_IN.values() for n in names)
    expected = {name: expected[name] for name in GRADED_IN[environment]}
    assert {w["score"] for w in expected.values()} >= {0, 6}, expected
    grader = copy_course(tmp_path / "cours")
    shutil.copytree(REPO / "solutions" / ASSIGNMENT, grader.parent / "solutions" / ASSIGNMENT)
    made = nbgrader(grader, "generate_assignment", ASSIGNMENT, "--log-level=WARN")
    assert made.returncode == 0, made.stdout + made.stderr
    release = grader.parent / "notebooks" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    released = nbformat.read(release, as_version=4)
    (answer,) = [c for c in released.cells if c.id == ASSIGNMENT]
    assert "NotImplementedError" in answer.source and "VACUUM" not in answer.source
    assert not any("noter_partage(oublier_partage" in c.source for c in released.cells)
    for name in expected:
        folder = grader / "submitted" / name / ASSIGNMENT
        folder.mkdir(parents=True)
        text = (SAMPLES / f"{name}.py").read_text(encoding="utf-8")
        nbformat.write(_submission(release, text), folder / f"{ASSIGNMENT}.ipynb")

    # graded with what the instructor installs, nothing of the test set
    instructor = _instructor_bin(environment)
    graded = nbgrader(grader, "autograde", ASSIGNMENT, "--log-level=INFO", bin_dir=instructor)
    log = graded.stdout + graded.stderr
    assert graded.returncode == 0, log
    assert "SANS bac à sable" not in log

    all_ids = {t.id for t in PARTAGE_TESTS}
    with Gradebook(f"sqlite:///{grader / 'gradebook.db'}") as gb:
        for name, wanted in expected.items():
            submission = gb.find_submission(ASSIGNMENT, name)
            notebook = submission.notebooks[0]
            failed = {
                g.name.removeprefix("test_")
                for g in notebook.grades
                if g.name.startswith("test_") and g.score < g.max_score
            }
            echecs = all_ids if wanted["echecs"] == "tous" else set(wanted["echecs"])
            assert (name, submission.score, failed) == (name, wanted["score"], echecs)
    assert _leftovers(clusters) == []  # every cluster stopped and removed
    if "sans_vacuum" not in expected:
        return
    # the feedback a student reads names the criterion, never the hidden learners
    autograded = grader / "autograded" / "sans_vacuum" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    text = autograded.read_text(encoding="utf-8")
    assert "VACUUM FULL" in text and "Kerbrat" not in text and "margaux" not in text

    feedback = nbgrader(grader, "generate_feedback", ASSIGNMENT, "--student=sans_vacuum")
    assert feedback.returncode == 0, feedback.stdout + feedback.stderr
    page = (grader / "feedback" / "sans_vacuum" / ASSIGNMENT / f"{ASSIGNMENT}.html").read_text()
    assert "Plus rien de l&#39;élève n&#39;est lisible dans les fichiers des tables" in page or (
        "Plus rien de l'élève n'est lisible dans les fichiers des tables" in page
    )
    assert "noter_partage(" not in page and "Kerbrat" not in page


def test_the_escape_sample_is_a_real_control(clusters):
    """Positive control for the sandbox: without it, the escape sample reaches something (the
    machine's files, the course's folder) and so erases nothing; in it, it scores 6 above."""
    text = (SAMPLES / "evasion.py").read_text(encoding="utf-8")
    evaluation = evaluate_partage(text, EXAMPLE, sandboxed=False)
    assert evaluation.statuses[0] == "ok"
    assert evaluation.score == 0
    assert _leftovers(clusters) == []


def test_the_grading_server_keeps_the_student_in_its_base(clusters):
    """What the student's role reaches on the grader's server: its base, nothing more (no
    superuser without the password, no other base, no command or file of the server's machine);
    the grader itself still reads everything with its password."""
    import asyncio

    import asyncpg

    from course.labo.partage_base import DATABASE, ROLE, GradingBase

    async def refused(**kwargs) -> bool:
        try:
            conn = await asyncpg.connect(host=base.host, **kwargs)
        except (asyncpg.PostgresError, OSError):
            return True
        await conn.close()
        return False

    async def student(query: str) -> str:
        conn = await asyncpg.connect(host=base.host, user=login, database=DATABASE)
        try:
            await conn.fetch(query)
            return "ok"
        except asyncpg.PostgresError as err:
            return type(err).__name__
        finally:
            await conn.close()

    with GradingBase([], ("Personne",)) as base:
        login = base.call_role()  # the call's own role, a member of eleve
        assert asyncio.run(refused(user="postgres", database="postgres"))
        assert asyncio.run(refused(user="postgres", database=DATABASE))
        assert asyncio.run(refused(user=login, database="postgres"))
        assert asyncio.run(refused(user=ROLE, database=DATABASE))  # the base's owner: no login
        assert not asyncio.run(refused(user=login, database=DATABASE))  # the positive control
        assert asyncio.run(student("CREATE TABLE t (x text)")) == "ok"
        for query in (
            "COPY (SELECT 1) TO PROGRAM 'id'",
            "SELECT pg_read_file('PG_VERSION')",
            "SELECT lo_import('/etc/passwd')",
            "ALTER ROLE eleve SUPERUSER",
            "CREATE DATABASE autre",
        ):
            assert asyncio.run(student(query)) == "InsufficientPrivilegeError", query
        facts = base.facts()  # the grader, with its password
        assert any(r[:3] == ("public", "t", "r") for r in facts.structure[:-1])
    assert _leftovers(clusters) == []


HIDING_VIEW = """
async def oublier_partage(sql, user_id):
    # the sessions hidden behind a view of the same name, the rows kept in the renamed table
    if not await sql("SELECT 1 FROM pg_class WHERE relname = 'cachette'"):
        await sql("ALTER TABLE sessions RENAME TO cachette")
        await sql("CREATE VIEW sessions AS SELECT * FROM cachette WHERE user_id <> 'chloe'")
    await sql("DELETE FROM user_states WHERE app_name = $1 AND user_id = $2", APP_NAME, user_id)
"""
BASE_SETTINGS = """
async def oublier_partage(sql, user_id):
    await sql("DELETE FROM sessions WHERE app_name = $1 AND user_id = $2", APP_NAME, user_id)
    await sql("DELETE FROM user_states WHERE app_name = $1 AND user_id = $2", APP_NAME, user_id)
    await sql("VACUUM FULL events, sessions, user_states")
    # settings every later connection to the base would get, the grader's included
    # (each sql() is a new connection: read-only last, or its own next ALTER would fail)
    await sql("ALTER DATABASE tuteur SET search_path = cachette")
    await sql("ALTER DATABASE tuteur SET statement_timeout = 1")
    await sql("ALTER DATABASE tuteur SET default_transaction_read_only = on")
"""


@pytest.mark.parametrize(
    ("source", "score"), [(HIDING_VIEW, 0), (BASE_SETTINGS, 6)], ids=["vue", "reglages"]
)
def test_a_base_rearranged_by_the_student_does_not_fool_the_grader(source, score, clusters):
    from course.labo.partage import STRUCTURE

    evaluation = evaluate_partage(source, EXAMPLE, sandboxed=True)
    assert evaluation.statuses == ["ok"] * 4
    assert evaluation.score == score, evaluation.verdicts
    if score == 0:
        assert evaluation.verdicts["partage_sessions"].message == STRUCTURE


async def _sessions_only(sql, user_id):  # a learner's first try, checked by their own verifier
    await sql("DELETE FROM sessions WHERE app_name = $1 AND user_id = $2", APP_NAME, user_id)  # noqa: F821


def test_the_learners_own_check_says_what_is_missing(capsys, clusters):
    """As the first TP's verifier: no value left to echo as Out[], « respectés », the hints of
    this TP offered and given by indice(1); noter_partage names the tests it knows."""
    from course.hints import LADDERS, TP_START, indice
    from course.labo.partage import noter_partage, verifier_partage

    assert verifier_partage(_sessions_only) is None
    shown = capsys.readouterr().out
    assert "✔ Les sessions de l'élève (et leurs événements) ont disparu" in shown
    assert "✘ Sa ligne user_states (l'état user:) a disparu\n    → " in shown  # as verifier's
    assert "la ligne user_states de l'élève existe encore" in shown
    assert "\n2/6 critères respectés sur l'exemple (vérifiés en " in shown
    assert "Bloqué sur le second TP, oublier_partage\u00a0? indice(1), puis indice(2)" in shown
    indice(1)
    hint = capsys.readouterr().out
    assert LADDERS["oublier_partage"].levels[0] in hint
    assert LADDERS[TP_START].levels[0] not in hint  # the first TP's, which it used to give
    noter_partage(_sessions_only, "partage_sessions")  # already checked: no second server
    with pytest.raises(AssertionError, match="la ligne user_states de l'élève existe encore"):
        noter_partage(_sessions_only, "partage_user_states")
    known = "partage_sessions, partage_user_states, partage_autres, partage_deux_fois, "
    with pytest.raises(ValueError) as unknown:
        noter_partage(_sessions_only, "sessions")
    assert str(unknown.value) == (
        f"Test inconnu\u00a0: 'sessions' (connus\u00a0: {known}partage_guillemets, "
        "partage_fichier)."
    )
    assert _leftovers(clusters) == []


COMPRESSED = """
async def oublier_partage(sql, user_id):
    # rows compressed in their pages: no name readable any more, erased or not
    await sql("ALTER TABLE events SET (toast_tuple_target = 128)")
    await sql("ALTER TABLE events ALTER COLUMN event_data SET COMPRESSION pglz")
    await sql("DELETE FROM sessions WHERE app_name = $1 AND user_id = $2", APP_NAME, user_id)
    await sql("DELETE FROM user_states WHERE app_name = $1 AND user_id = $2", APP_NAME, user_id)
    await sql("VACUUM FULL events, sessions, user_states")
"""


def test_rows_compressed_to_hide_their_bytes_are_a_changed_structure(clusters):
    from course.labo.partage import STRUCTURE

    evaluation = evaluate_partage(COMPRESSED, EXAMPLE, sandboxed=True)
    assert evaluation.statuses[0] == "ok"
    assert evaluation.score == 0
    assert evaluation.verdicts["partage_fichier"].message == STRUCTURE


# -- the server's own work in the submission's budget (issue 32, point 4) ----------------------


def test_the_students_roles_cannot_lift_the_servers_limits(clusters):
    """Each call logs in as a role of its own, dropped after it. What no role of the student's
    may change (temp_file_limit, its connection limit, the system's settings, eleve's login) is
    refused; what PostgreSQL lets every role set for itself (SET, ALTER ROLE CURRENT_USER SET,
    ALTER DATABASE as the base's owner, ALTER ROLE eleve SET after SET ROLE) is accepted, reaches
    the call's later connections (the positive control), and lifts no limit: a sort past
    temp_file_limit still fails, a fourth connection is refused, a query past its process's
    address space fails « out of memory » whatever work_mem says. The next call's role has none
    of it, and the first role no longer exists."""
    import asyncio

    import asyncpg

    from course.labo.partage_base import DATABASE, ROLE, GradingBase, ServerLimits

    async def student(role: str, *queries: str) -> list[str]:
        conn = await asyncpg.connect(host=base.host, user=role, database=DATABASE)
        out = []
        try:
            for query in queries:
                try:
                    rows = await conn.fetch(query)
                    out.append(str(rows[0][0]) if rows and len(rows[0]) else "ok")
                except asyncpg.PostgresError as err:
                    out.append(type(err).__name__)
        finally:
            await conn.close()
        return out

    async def connections(role: str, count: int) -> list[str]:
        opened, results = [], []
        for _ in range(count):
            try:
                opened.append(await asyncpg.connect(host=base.host, user=role, database=DATABASE))
                results.append("ok")
            except asyncpg.PostgresError as err:
                results.append(type(err).__name__)
        for conn in opened:
            await conn.close()
        return results

    # a sort that spills 30 MB to temporary files (past the 8 MB limit, with a small work_mem)
    sort = "SELECT count(*) FROM (SELECT * FROM generate_series(1, 1000000) ORDER BY 1 DESC) s"
    # 200 MB in one aggregate: past the 96 MB a server process may add
    hog = "SELECT length(string_agg(repeat('x', 1000000), '')) FROM generate_series(1, 200)"
    denied = "InsufficientPrivilegeError"

    def limits_hold(role: str) -> None:
        spill = ["ok", "8MB", "ConfigurationLimitExceededError"]
        assert asyncio.run(
            student(role, "SET work_mem = '64kB'", "SHOW temp_file_limit", sort)
        ) == (spill)
        assert asyncio.run(connections(role, 4)) == ["ok", "ok", "ok", "TooManyConnectionsError"]
        assert asyncio.run(student(role, hog, "SELECT 1")) == ["OutOfMemoryError", "1"]

    async def roles() -> list[str]:
        admin = await base._connect("postgres")  # the grader, with its password
        try:
            return [r[0] for r in await admin.fetch("SELECT rolname FROM pg_roles")]
        finally:
            await admin.close()

    limits = ServerLimits(**SMALL, backend_bytes=96 << 20)
    with GradingBase([], ("Personne",), limits) as base:
        first = base.call_role()
        assert first.startswith(f"{ROLE}_")
        assert (
            asyncio.run(
                student(
                    first,
                    "SET temp_file_limit = -1",
                    "ALTER ROLE CURRENT_USER SET temp_file_limit = -1",
                    f"ALTER DATABASE {DATABASE} SET temp_file_limit = -1",
                    "ALTER ROLE CURRENT_USER CONNECTION LIMIT -1",
                    f"ALTER ROLE {ROLE} LOGIN",
                    "ALTER SYSTEM SET temp_file_limit = -1",
                )
            )
            == [denied] * 6
        )
        # accepted: a role's own defaults, the base's (its owner's), eleve's through SET ROLE
        lifted = [
            "ALTER ROLE CURRENT_USER SET statement_timeout = 0",
            "ALTER ROLE CURRENT_USER SET work_mem = '1GB'",
            f"ALTER DATABASE {DATABASE} SET maintenance_work_mem = '1GB'",
            f"ALTER DATABASE {DATABASE} SET idle_in_transaction_session_timeout = 0",
            f"SET ROLE {ROLE}",
            f"ALTER ROLE {ROLE} SET statement_timeout = 0",
            "RESET ROLE",
            "SET work_mem = '1GB'",
        ]
        assert asyncio.run(student(first, *lifted)) == ["ok"] * len(lifted)
        shown = ("statement_timeout", "work_mem", "maintenance_work_mem")
        queries = [f"SHOW {name}" for name in shown]
        # the positive control: the call's next connections have its own (the base's come
        # after the role's, which the grader set: maintenance_work_mem stays)
        assert asyncio.run(student(first, *queries)) == ["0", "1GB", "64MB"]
        limits_hold(first)
        base.facts()  # after the call: its role dropped
        with pytest.raises(asyncpg.InvalidAuthorizationSpecificationError):
            asyncio.run(student(first, "SELECT 1"))
        second = base.call_role()
        assert second != first
        assert asyncio.run(student(second, *queries)) == ["30s", "4MB", "64MB"]
        limits_hold(second)
        base.facts()
        names = asyncio.run(roles())
        assert first not in names and second not in names and ROLE in names
    assert _leftovers(clusters) == []


@pytest.mark.parametrize("attack", ["disque", "memoire"])
def test_a_server_spending_past_the_budget_is_a_zero_with_its_reason(attack, clusters):
    """The server's disk (an UNLOGGED table filling the cluster's folder) and memory (one
    query's aggregate) count in the submission's budget: stopped at once, every test 0 with the
    French reason, an evaluation that ends (never an error that the next make grade retries),
    and nothing left in the clusters' folder."""
    from course.labo.partage import CALL_ENDS
    from course.labo.partage_base import ServerLimits

    source, limits, statuses, score = LIMIT_ATTACKS[attack]
    (status,) = statuses
    start = time.monotonic()
    evaluation = evaluate_partage(source, EXAMPLE, sandboxed=True, limits=ServerLimits(**limits))
    assert evaluation.statuses == [status]
    assert evaluation.score == score == 0
    assert evaluation.reason == CALL_ENDS[status][1]
    assert {v.message for v in evaluation.verdicts.values()} == {CALL_ENDS[status][1]}
    assert time.monotonic() - start < 120
    assert _leftovers(clusters) == []


def test_twelve_concurrent_aggregates_leave_the_server_up(clusters):
    """The attack that crashed the server (twelve string_agg at once, OOM, recovery): each call's
    role has three connections, each server process a bounded address space, so the queries fail
    in the server (out of memory, too many connections) and the server keeps answering: the same
    call then erases the learner, graded as usual."""
    from course.labo.partage_base import ServerLimits

    source, limits, statuses, score = LIMIT_ATTACKS["agregats_concurrents"]
    evaluation = evaluate_partage(source, EXAMPLE, sandboxed=True, limits=ServerLimits(**limits))
    assert evaluation.statuses == statuses
    assert evaluation.score == score == 6, evaluation.verdicts
    assert _leftovers(clusters) == []


def test_the_clusters_folder_is_private_and_never_the_machines_tmp(tmp_path, monkeypatch):
    """By default, a folder of the user's own (root: one the server's user may traverse, not
    list); a folder given by COURS_PARTAGE_DOSSIER that others may write in (/tmp) or a link is
    refused, with the reason, before any server starts."""
    from course.labo.partage_base import FOLDER_ENV, ROOT_FOLDER, _server_user, clusters_root

    monkeypatch.delenv(FOLDER_ENV, raising=False)
    monkeypatch.delenv("TMPDIR", raising=False)
    root = clusters_root()
    st = root.stat()
    if _server_user() is None:
        assert root == Path.home() / ".cache" / "cours-partage"
        assert st.st_mode & 0o777 == 0o700
    else:  # root, whose home the server's user cannot enter
        assert root == ROOT_FOLDER or Path.home().stat().st_mode & 0o001
        assert st.st_mode & 0o777 == 0o711
    assert st.st_uid == os.geteuid()
    assert not root.is_relative_to("/tmp") and not root.is_relative_to(tempfile.gettempdir())
    shared = tmp_path / "commun"
    shared.mkdir()
    shared.chmod(0o1777)
    (tmp_path / "lien").symlink_to(shared)
    for folder, words in (
        ("/tmp", "(ouvert en écriture|doit être un dossier à vous)"),
        (str(shared), "ouvert en écriture à d'autres"),
        (str(tmp_path / "lien"), "doit être un dossier à vous"),
        (str(tmp_path / ("long" * 30)), "chemin trop long"),
    ):
        monkeypatch.setenv(FOLDER_ENV, folder)
        with pytest.raises(RuntimeError, match=words):
            clusters_root()
    assert not (tmp_path / ("long" * 30)).exists()  # refused before anything is made
    assert oct(Path("/tmp").stat().st_mode & 0o7777) == "0o1777"  # untouched


def test_grading_stops_before_the_first_submission_on_an_unusable_clusters_folder(monkeypatch):
    """The hooks check the clusters' folder with PostgreSQL, before grading anything: a French
    sentence that names the setting, not one failed submission after another."""
    from grading.nbgrader_ext.hooks import LABS

    from course.labo.partage_base import FOLDER_ENV

    monkeypatch.delenv(FOLDER_ENV, raising=False)
    assert LABS["oublier_partage"].problem() is None  # the positive control
    monkeypatch.setenv(FOLDER_ENV, "/tmp")
    problem = LABS["oublier_partage"].problem()
    assert problem is not None
    assert problem.startswith("Le TP oublier_partage se note sur un vrai PostgreSQL\u00a0: /tmp ")
    assert FOLDER_ENV in problem


def _namespace_tmp_available() -> bool:
    return os.geteuid() == 0 and shutil.which("unshare") is not None


@pytest.mark.skipif(not _namespace_tmp_available(), reason="un /tmp vide à soi demande root")
def test_grading_writes_nothing_in_the_machines_tmp(clusters, monkeypatch):
    """One submission graded with the default temporary folder, in a mount namespace whose /tmp
    is an empty tmpfs (so that no other process of the machine writes there): nothing appears in
    /tmp but the watch's positive control, a file made there by tempfile during the run; the
    cluster's folder was made 0700 in the clusters' folder, and is gone."""
    from course.labo.partage_base import _server_user

    monkeypatch.delenv("TMPDIR", raising=False)
    config = {
        "items": {"complete": {"source": (SAMPLES / "complete.py").read_text(), "limits": None}},
        "grader": None,
        "watch_uid": None,
        "clusters": str(clusters),
    }
    done = subprocess.run(
        in_empty_tmp([sys.executable, str(Path(__file__).with_name("partage_batch.py"))], "64m"),
        input=json.dumps(config),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout)
    assert report["results"]["complete"]["score"] == 6, report
    control = Path(report["control"])
    assert control.parent == Path("/tmp")  # the default temporary folder, watched
    assert report["tmp_new"] == [control.name]
    server = _server_user()
    owner = server.pw_uid if server is not None else os.geteuid()
    assert len(report["clusters_made"]) == 1, report
    assert [list(v) for v in report["clusters_made"].values()] == [[owner, 0o700]]
    assert report["clusters_left"] == []
