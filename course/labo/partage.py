"""Grades ``oublier_partage``, the shared-database lab (lesson 7's exercise, graded if the
teacher wants it), on a real PostgreSQL started for each submission.

The grader starts the cluster (``course.labo.partage_base``: one private cluster in a folder of
the course's own, never the machine's ``/tmp``; an ordinary role per call, dropped after it; no
TCP) and seeds it; each call of the student's function then runs in its own sandboxed
process (``course.labo.sandbox``: no network, only the cluster's socket bound in, nothing else of
the machine's files), and the grader reads the base between calls. Calls, in order: the learner
to erase, the same learner again, an unknown learner, a learner whose id holds an apostrophe.

Six tests, one point each, all hidden (``PARTAGE_TESTS``); criteria 3 to 6 count only once the
erasure itself holds, as in the TP. Nothing a submission prints or raises reaches a message.

The server's work is the submission's too (``partage_base.ServerLimits``): while a call runs,
the grader polls the server's processes and the cluster's folder, and stops the call (and every
query of the student's role) at its time limit, or as soon as the server holds more memory or
its folder grows by more bytes than the budget: a 0, with the reason, never a failure of the
grader that a later ``make grade`` would retry. A server that no longer answers after a call (it
was made to crash) is a 0 with its reason too.
"""

from __future__ import annotations

import ast
import inspect
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .checks import defining_cell, say_verdicts
from .criteria import Verdict
from .french_number import french_number
from .learner_errors import MauvaisArgument, PasUneFonction, interrupted_in_french
from .outcome import Outcome
from .partage_base import DATABASE, BaseFacts, GradingBase, ServerLimits
from .partage_runner import EXIT, FUNCTION, REFUSED
from .sandbox import Limits, Sandbox

__all__ = [
    "CALL_ENDS",
    "CALL_TIMEOUT",
    "EXAMPLE",
    "PARTAGE_TESTS",
    "Learner",
    "PartageEvaluation",
    "PartageScenario",
    "PartageTest",
    "evaluate_partage",
    "noter_partage",
    "partage_titles",
    "verifier_partage",
]

CALL_TIMEOUT = 20.0  # seconds per call (Python, asyncpg and the student's queries)
POLL_SECONDS = 0.2  # how often the server's memory and folder are measured during a call
MAX_CELL_CHARS = 100_000
LIMITS = Limits()  # the TP's limits (RLIMIT_NPROC counts the grader's own processes without root)


@dataclass(frozen=True)
class Learner:
    """A learner of the seed: one session in `app`, one tutor turn per message; `name` is the
    text searched for in the base's files."""

    user_id: str
    name: str
    messages: tuple[str, ...]
    app: str = "tuteur"

    def seed(self) -> dict:
        return {"user_id": self.user_id, "app": self.app, "messages": list(self.messages)}


@dataclass(frozen=True)
class PartageScenario:
    """Who is erased, who must stay (`witnesses`, the same ids in another app included)."""

    target: Learner
    quoted: Learner  # its id holds an apostrophe
    unknown: str
    witnesses: tuple[Learner, ...]

    @property
    def learners(self) -> list[Learner]:
        return [self.target, self.quoted, *self.witnesses]


@dataclass(frozen=True)
class PartageTest:
    """One graded test: an nbgrader grade cell of the lab's notebook (``grade_id``)."""

    id: str
    title: str
    failure: str  # French, for the student

    @property
    def grade_id(self) -> str:
        return f"test_{self.id}"


PARTAGE_TESTS: tuple[PartageTest, ...] = (
    PartageTest(
        "partage_sessions",
        "Les sessions de l'élève (et leurs événements) ont disparu de la base partagée",
        "des sessions ou des événements de l'élève restent dans la base partagée.",
    ),
    PartageTest(
        "partage_user_states",
        "Sa ligne user_states (l'état user:) a disparu",
        "la ligne user_states de l'élève existe encore\u00a0: l'état user: est rangé à part.",
    ),
    PartageTest(
        "partage_autres",
        "Les autres élèves, les autres applications et app_states sont intacts",
        "oublier_partage a modifié des données qui ne sont pas à cet élève, ou la structure de "
        "la base\u00a0: chaque DELETE doit viser app_name ET user_id.",
    ),
    PartageTest(
        "partage_deux_fois",
        "Un second appel, ou un élève inconnu, ne lève pas d'erreur et ne change rien",
        "un second appel, ou un appel pour un élève inconnu, lève une erreur ou modifie encore "
        "la base.",
    ),
    PartageTest(
        "partage_guillemets",
        "Un user_id avec une apostrophe est effacé sans erreur ni excès",
        "avec un user_id qui contient une apostrophe, oublier_partage échoue ou touche à "
        "d'autres données\u00a0: passez user_id en valeur ($1, $2), jamais dans le texte SQL.",
    ),
    PartageTest(
        "partage_fichier",
        "Plus rien de l'élève n'est lisible dans les fichiers des tables",
        "le texte de l'élève se lit encore dans les fichiers des tables (tuples morts)\u00a0: "
        "DELETE ne fait que marquer les lignes, terminez par VACUUM FULL.",
    ),
)
STRUCTURE = (
    "oublier_partage a changé la structure de la base (tables, vues, index ou déclencheurs "
    "ajoutés, supprimés ou remplacés)\u00a0: une copie des données peut s'y cacher, et les "
    "tables ne disent plus ce qu'elles contiennent. oublier_partage efface des lignes, elle ne "
    "crée rien."
)
WITNESS_UNSEEN = (
    "les données des autres élèves ne se lisent plus dans les fichiers des tables (réécrites "
    "autrement, compressées\u00a0?)\u00a0: la recherche du texte de l'élève ne prouverait "
    "rien. oublier_partage efface des lignes et réécrit les tables avec VACUUM FULL, rien de plus."
)
_GATE = (
    "ce point ne compte que si oublier_partage a d'abord effacé l'élève en entier et rien "
    "d'autre (ses sessions, ses événements, sa ligne user_states), ce qui n'est pas le cas."
)
RAISED = ("raised", *REFUSED.values())  # calls that ran, then raised
# How one call of oublier_partage can end (the runner's exit status, or the grader stopping it),
# with the Outcome the submission gets when its grading ends on it (None: the tests judge what
# the calls did) and the French sentence the student reads: the statuses, their outcomes and
# their words in one table.
CALL_ENDS: dict[str, tuple[Outcome | None, str]] = {
    "ok": (None, ""),
    "raised": (None, "oublier_partage a levé une exception."),
    # PostgreSQL's commonest refusals, by kind (partage_runner.REFUSED)
    "sql_syntax": (
        None,
        "oublier_partage a levé une exception\u00a0: PostgreSQL refuse une de ses requêtes, "
        "erreur de syntaxe SQL à relire\u00a0: FROM, WHERE, les virgules.",
    ),
    "sql_table": (
        None,
        "oublier_partage a levé une exception\u00a0: une table que nomme une de ses requêtes "
        "n'existe pas\u00a0; celles de la base\u00a0: sessions, events, user_states, app_states.",
    ),
    "sql_column": (
        None,
        "oublier_partage a levé une exception\u00a0: une colonne que nomme une de ses requêtes "
        "n'existe pas (celles de la leçon 7\u00a0: app_name, user_id, id, session_id), ou une "
        "valeur écrite dans le texte SQL y est lue comme un nom de colonne\u00a0: passez-la à "
        'part, sql("… WHERE user_id = $1", user_id).',
    ),
    "not_async": (None, "oublier_partage n'est pas une fonction asynchrone (async def)."),
    # judged on the base as the others, named on every criterion that fails
    "unawaited": (
        None,
        "un appel à sql(...) n'a pas été attendu\u00a0: sans await, il ne fait rien. Écrivez "
        "await devant (await sql(...)).",
    ),
    "load": (Outcome.LOAD_ERROR, "la cellule ne se charge pas (erreur à son exécution)."),
    "missing": (Outcome.LOAD_ERROR, "la cellule ne définit pas oublier_partage."),
    Outcome.TIMEOUT: (
        Outcome.TIMEOUT,
        f"oublier_partage n'a pas fini en {CALL_TIMEOUT:g}\u00a0s.",
    ),
    Outcome.CRASH: (
        Outcome.CRASH,
        "le processus qui exécutait oublier_partage s'est arrêté sans réponse.",
    ),
    # the server's budget spent or broken: the whole submission is a 0
    "memory": (
        Outcome.CRASH,
        "les requêtes d'oublier_partage ont fait dépasser au serveur PostgreSQL la mémoire "
        "permise\u00a0: tout a été arrêté.",
    ),
    "disk": (
        Outcome.CRASH,
        "les requêtes d'oublier_partage ont fait écrire au serveur PostgreSQL plus de données "
        "que permis (tables, fichiers temporaires)\u00a0: tout a été arrêté.",
    ),
    "server": (
        Outcome.CRASH,
        "le serveur PostgreSQL ne répondait plus après l'appel d'oublier_partage (mémoire "
        "ou disque épuisés par ses requêtes)\u00a0: tout a été arrêté.",
    ),
}
OVER_BUDGET = ("memory", "disk", "server")
NOT_WRITTEN = "oublier_partage n'est pas encore écrite\u00a0: remplacez le raise par votre code."


def partage_titles() -> dict[str, str]:
    """grade_id -> French title, for the feedback and the class report."""
    return {t.grade_id: t.title for t in PARTAGE_TESTS}


@dataclass(frozen=True)
class PartageEvaluation:
    """What one evaluation found: a verdict per test (its id), and how it ended."""

    verdicts: dict[str, Verdict]
    seconds: float
    sandboxed: bool
    ended: Outcome = Outcome.GRADED
    reason: str = ""  # French, when it did not end graded
    statuses: list[str] = field(default_factory=list)

    @property
    def score(self) -> int:
        return sum(1 for v in self.verdicts.values() if v.ok)

    @property
    def max_score(self) -> int:
        return len(PARTAGE_TESTS)

    def outcome(self) -> tuple[Outcome, str]:
        return self.ended, self.reason


def _written(source: str) -> str | None:
    """None if the cell defines an async ``oublier_partage`` with a body; else the reason."""
    if len(source) > MAX_CELL_CHARS:
        return CALL_ENDS["load"][1]
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return CALL_ENDS["load"][1]
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == FUNCTION:
            for statement in node.body:
                if isinstance(statement, ast.Raise) and statement.exc is not None:
                    exc = statement.exc
                    exc = exc.func if isinstance(exc, ast.Call) else exc
                    if isinstance(exc, ast.Name) and exc.id == "NotImplementedError":
                        return NOT_WRITTEN
            return None
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == FUNCTION for t in node.targets
        ):
            return None  # oublier_partage = another function: the runner checks it
    return CALL_ENDS["missing"][1]


def _call(base: GradingBase, source: str, user_id: str, sandboxed: bool) -> str:
    """One call in its own process (sandboxed: only the socket bound in); its status. Stopped
    at the time limit, or as soon as the server spends more than its budget."""
    argv = [sys.executable, "-I", "-m", "course.labo.partage_runner"]
    host = base.host
    if sandboxed:
        argv = Sandbox(LIMITS).command(argv, readable=(base.socket,))
    # a login role of this call's own, dropped after it (with whatever it set on itself)
    request = {"source": source, "user_id": user_id, "host": host, "user": base.call_role()}
    request["database"] = DATABASE
    proc = subprocess.Popen(
        argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd="/",
        start_new_session=True,
    )
    assert proc.stdin is not None
    try:
        proc.stdin.write((json.dumps(request) + "\n").encode())
        proc.stdin.close()
    except OSError:
        pass
    deadline = time.monotonic() + CALL_TIMEOUT
    stop = None
    try:
        while proc.poll() is None:
            memory, disk = base.usage()
            if memory > base.limits.memory_bytes:
                stop = "memory"
            elif disk - base.disk_start > base.limits.disk_bytes:
                stop = "disk"
            elif time.monotonic() > deadline:
                stop = Outcome.TIMEOUT
            if stop:
                break
            try:
                proc.wait(timeout=POLL_SECONDS)
            except subprocess.TimeoutExpired:
                pass
    finally:
        if proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                proc.kill()
        proc.wait()
    if stop:
        return stop
    by_code = {code: name for name, code in EXIT.items()}
    return by_code.get(proc.returncode, Outcome.CRASH)


def _judge(scenario: PartageScenario, before: BaseFacts, after: list[BaseFacts], statuses):
    app = scenario.target.app
    target = (app, scenario.target.user_id)
    quoted = (app, scenario.quoted.user_id)
    verdicts: dict[str, Verdict] = {}
    first = after[0] if after else None
    done = ("ok", "unawaited")  # calls that returned: an unawaited sql(...) did nothing
    ok_call = bool(statuses) and statuses[0] == "ok"
    same_structure = first is not None and first.structure == before.structure

    def gone(facts: BaseFacts, who: tuple[str, str], tables) -> bool:
        return all(facts.count(t, *who) == 0 for t in tables)

    sessions = same_structure and gone(first, target, ("sessions", "events"))
    states = same_structure and gone(first, target, ("user_states",))
    others = sessions and first.others([target]) == before.others([target])
    correct = sessions and states and others
    again = (
        correct
        and len(after) >= 3
        and all(status in done for status in statuses[1:3])
        and all(f.groups == first.groups and f.structure == first.structure for f in after[1:3])
    )
    last = after[3] if len(after) >= 4 else None
    quotes = (
        correct
        and last is not None
        and statuses[3] in done
        and gone(last, quoted, ("sessions", "events", "user_states"))
        and last.structure == before.structure
        and last.others([target, quoted]) == after[2].others([target, quoted])
    )
    readable = first.readable if first is not None else {}
    witness = min((readable.get(w.name, 0) for w in scenario.witnesses), default=0)
    # the search must find the others (the witness), else it proves nothing
    unseen = correct and witness == 0
    clean = correct and not unseen and readable.get(scenario.target.name, 1) == 0
    results = {
        "partage_sessions": sessions,
        "partage_user_states": states,
        "partage_autres": others,
        "partage_deux_fois": again,
        "partage_guillemets": quotes,
        "partage_fichier": clean,
    }
    gated = ("partage_deux_fois", "partage_guillemets", "partage_fichier")
    for test in PARTAGE_TESTS:
        ok = results[test.id]
        if ok:
            verdicts[test.id] = Verdict(True, "")
            continue
        message = test.failure
        if first is not None and not same_structure:
            message = STRUCTURE
        elif test.id == "partage_fichier" and unseen:
            message = WITNESS_UNSEEN
        elif test.id in gated and not correct:
            message = _GATE
        elif test.id == "partage_autres" and not sessions:
            message = _GATE
        elif not ok_call and statuses:
            message = f"{message} ({CALL_ENDS[statuses[0]][1]})"
        verdicts[test.id] = Verdict(False, message)
    return verdicts


def evaluate_partage(
    source: str,
    scenario: PartageScenario,
    *,
    sandboxed: bool = True,
    limits: ServerLimits | None = None,
) -> PartageEvaluation:
    """Grade one ``oublier_partage`` cell on a fresh cluster (about 10 s: the seed through ADK).

    A call that spends more than the server's budget (`limits`) makes it a 0 with the reason."""
    start = time.monotonic()
    problem = _written(source)
    if problem is not None:
        ended = Outcome.NOT_WRITTEN if problem == NOT_WRITTEN else Outcome.LOAD_ERROR
        verdicts = {t.id: Verdict(False, problem) for t in PARTAGE_TESTS}
        return PartageEvaluation(verdicts, time.monotonic() - start, sandboxed, ended, problem)
    names = tuple(learner.name for learner in scenario.learners)
    calls = [
        scenario.target.user_id,
        scenario.target.user_id,
        scenario.unknown,
        scenario.quoted.user_id,
    ]
    statuses: list[str] = []
    after: list[BaseFacts] = []
    seeds = [learner.seed() for learner in scenario.learners]
    with GradingBase(seeds, names, limits) as base:
        before = base.facts()
        for user_id in calls:
            status = _call(base, source, user_id, sandboxed)
            try:
                facts = base.facts()
            except Exception:  # noqa: BLE001 - the server was healthy before the call
                status = status if status in OVER_BUDGET else "server"
                facts = None
            statuses.append(status)
            if status in OVER_BUDGET:
                break
            assert facts is not None
            after.append(facts)
            if status not in ("ok", *RAISED):  # no call after one that did not run
                break
    if statuses and statuses[-1] in OVER_BUDGET:
        reason = CALL_ENDS[statuses[-1]][1]
        verdicts = {t.id: Verdict(False, reason) for t in PARTAGE_TESTS}
        seconds = time.monotonic() - start
        return PartageEvaluation(verdicts, seconds, sandboxed, Outcome.CRASH, reason, statuses)
    verdicts = _judge(scenario, before, after, statuses)
    ended, reason = Outcome.GRADED, ""
    if statuses and CALL_ENDS[statuses[-1]][0] is not None:
        ended, reason = CALL_ENDS[statuses[-1]]
    seconds = time.monotonic() - start
    return PartageEvaluation(verdicts, seconds, sandboxed, ended, reason, statuses)


# The example the student's own check uses (lesson 7's learners); the grader's hidden one is in
# grader/grading/nbgrader_ext/hidden_partage.py, out of the students' reach.
EXAMPLE = PartageScenario(
    target=Learner("chloe", "Dupuis", ("Bonjour, je m'appelle Chloé Dupuis", "4")),
    quoted=Learner("o'brien", "OBrien", ("Bonjour, je m'appelle Seán OBrien",)),
    unknown="personne",
    witnesses=(
        Learner("bob", "Lemercier", ("Bonjour, je m'appelle Bob Lemercier", "2")),
        Learner("chloe", "Rendez", ("Rendez-vous chez le dentiste",), app="agenda"),
    ),
)
_CHECKED: dict[str, PartageEvaluation] = {}


def _source(function: Callable[..., Any]) -> str:
    cell = defining_cell(function)  # raises when that cell no longer compiles
    try:
        source = textwrap.dedent(inspect.getsource(function))
    except (OSError, TypeError):
        if cell is None:
            raise PasUneFonction(
                "verifier_partage attend votre fonction oublier_partage, définie dans une cellule."
            ) from None
        source = cell  # defined under %%time: IPython keeps no lines of it
    name = getattr(function, "__name__", FUNCTION)
    if name != FUNCTION and name.isidentifier():  # checked under the name grading calls
        source += f"\n{FUNCTION} = {name}\n"
    return source


def verifier_partage(fonction: Callable[..., Any]) -> None:
    """Vérifie votre ``oublier_partage`` sur un PostgreSQL neuf, avec l'exemple de la leçon 7
    (Chloé, O'Brien, Bob)\u00a0: une ligne par critère, puis combien sont respectés.

    Votre fonction tourne dans un processus à part, avec vos droits, sans le bac à sable de la
    notation\u00a0; la notation, elle, utilise d'autres élèves."""
    from ..hints import offer_hints, set_tp_cause

    set_tp_cause(FUNCTION)  # indice() climbs this TP's ladder, even if the check is stopped
    source = _source(fonction)
    with interrupted_in_french():
        evaluation = evaluate_partage(source, EXAMPLE, sandboxed=False)
    _CHECKED[source] = evaluation
    reason = evaluation.reason
    # stopped before judging (not written yet, not loadable, over budget): every criterion has
    # that one reason, said once
    stopped = reason and all(v.message == reason for v in evaluation.verdicts.values())
    say_verdicts(
        reason if stopped else None, [(t.title, evaluation.verdicts[t.id]) for t in PARTAGE_TESTS]
    )
    seconds = french_number(evaluation.seconds, 1)
    print(
        f"\n{evaluation.score}/{evaluation.max_score} critères respectés sur l'exemple "
        f"(vérifiés en {seconds}\u00a0s)."
    )
    # as the first TP's verifier: indice() now climbs this TP's ladder (named as its function)
    offer_hints(None if evaluation.score == evaluation.max_score else FUNCTION)


def noter_partage(fonction: Callable[..., Any], test: str) -> None:
    """Le test `test` sur l'exemple (la vérification est faite une fois par version de votre
    fonction)\u00a0; lève AssertionError avec le message du critère s'il échoue."""
    known = [t.id for t in PARTAGE_TESTS]
    if test not in known:
        raise MauvaisArgument(f"Test inconnu\u00a0: {test!r} (connus\u00a0: {', '.join(known)}).")
    source = _source(fonction)
    if source not in _CHECKED:
        with interrupted_in_french():
            _CHECKED[source] = evaluate_partage(source, EXAMPLE, sandboxed=False)
    verdict = _CHECKED[source].verdicts[test]
    assert verdict.ok, verdict.message


if __name__ == "__main__":  # pragma: no cover - by hand: python -m course.labo.partage FILE
    text = Path(sys.argv[1]).read_text(encoding="utf-8")
    print(evaluate_partage(text, EXAMPLE, sandboxed="--sans-bac" not in sys.argv))
