"""The TP's seven criteria: one structure each, used by ``verifier``, ``noter``, the grader's
nbgrader hooks and the statement's table.

A criterion says what it needs (the roles of the calls it reads), how it judges the typed facts
of a scenario's run, and what to tell the student when it fails (French). Its graded tests are
nbgrader grade cells (``grade_id == "test_" + id``), one point each: a visible one on the example
base for some criteria, a hidden one, on other learners and other inputs, for all.

The rubric weighs the lesson's central point and the harm done: criteria 2 and 4 count only once
the learner's sessions are gone (doing nothing must not pay), criteria 5 to 7 only once the
erasure itself is right (criteria 1 to 4 for that call: sessions, events, user_states, and nothing
else). A failed check explains what is missing; on the hidden inputs it never names them, and it
shows no text the student's code chose: an exception's message is left out and its class name
is shown only if it is one of Python's or sqlite3's own (``KNOWN_ERRORS``), else a fixed text.
"""

from __future__ import annotations

import builtins
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum

from course.sql_messages import sql_in_french

from .french_number import french_number
from .protocol import CallOutcome
from .scenario import CallResult, Role, RunEnd, ScenarioResult

__all__ = [
    "KNOWN_ERRORS",
    "TITLES",
    "CRITERIA",
    "NOT_WRITTEN",
    "TESTS",
    "Criterion",
    "call_notes",
    "Gate",
    "Test",
    "Verdict",
    "grade_titles",
    "judge",
    "judge_all",
    "judge_scenario",
    "load_message",
    "load_problem",
    "not_written",
    "statement_table",
    "unfinished_message",
]


class Gate(Enum):
    """What must hold for the gate call before a criterion can give its points."""

    NONE = "none"
    SESSIONS_ERASED = "sessions_erased"  # the learner's sessions are gone
    CORRECT_ERASURE = "correct_erasure"  # criteria 1 to 4 hold for that call


@dataclass(frozen=True)
class Verdict:
    """A criterion's or a test's result."""

    ok: bool
    message: str  # French, for the student


@dataclass(frozen=True)
class Criterion:
    """One criterion of the statement, from its title to its graded tests."""

    key: str
    number: int
    title: str  # as in the statement (without its Markdown backticks)
    roles: tuple[Role, ...]  # the calls it reads; each must have ended with a usable file
    holds: Callable[[ScenarioResult], bool]  # judged once those calls and the gate are fine
    failure: str  # French: what is missing when it does not hold
    hidden_test: str
    visible_test: str | None = None
    gate: Gate = Gate.NONE
    gate_role: Role = Role.ERASE
    hidden_hint: str = ""  # French, added when only the hidden inputs fail it
    points_per_test: int = 1
    explain: Callable[[ScenarioResult], str | None] | None = None  # a sharper failure, French

    @property
    def tests(self) -> tuple[Test, ...]:
        """Its graded tests: the visible one (if any), then the hidden one."""
        hidden = Test(self.hidden_test, self.key, False, self.points_per_test)
        if self.visible_test is None:
            return (hidden,)
        return (Test(self.visible_test, self.key, True, self.points_per_test), hidden)

    @property
    def points(self) -> int:
        return sum(t.points for t in self.tests)


@dataclass(frozen=True)
class Test:
    """One graded test: an nbgrader grade cell of the TP notebook."""

    id: str
    criterion: str
    visible: bool
    points: int = 1

    @property
    def grade_id(self) -> str:
        return f"test_{self.id}"


# -- facts helpers ----------------------------------------------------------------------------


def _facts(call: CallResult):
    assert call.facts is not None  # judged only once the call ended with a usable file
    return call.facts


def _erased_sessions(call: CallResult) -> bool:
    return _facts(call).sessions_left == 0


def _correct_erasure(call: CallResult) -> bool:
    f = _facts(call)
    return f.sessions_left == 0 and f.events_left == 0 and not f.user_state_left and f.others_intact


def _erased_in_full(call: CallResult) -> bool:
    """Criteria 1 to 4 hold for `call`, which left a file to judge (checked here: a criterion
    that reads another call's file does not check this one's)."""
    usable = call.facts is not None and call.facts.present and call.facts.readable
    return usable and _correct_erasure(call)


def _clean(outcome: CallOutcome | None) -> bool:
    return outcome is not None and outcome.error is None and not outcome.not_async


def _unchanged_after(result: ScenarioResult, base: Role, roles: tuple[Role, ...]) -> bool:
    """Every call of `roles` raised nothing and left the file as the `base` call had left it."""
    reference = _facts(result.first(base)).fingerprint
    calls = [c for role in roles for c in result.of(role)]
    return all(_clean(c.outcome) and _facts(c).fingerprint == reference for c in calls)


def _file_clean(result: ScenarioResult) -> bool:
    """Criterion 7: nothing of the learner readable, no object or file where a copy can hide."""
    call = result.first(Role.ERASE)
    f = _facts(call)
    stray = call.outcome.stray_files if call.outcome else 0
    closed = call.outcome is not None and call.outcome.service_closed
    return f.personal_data_found == 0 and f.extra_objects == 0 and stray == 0 and not closed


EXTRA_OBJECTS = (
    "la base contient des tables, vues, index ou déclencheurs qu'elle n'avait pas\u00a0: une copie "
    "des données de l'élève peut s'y cacher. oublier efface des lignes, elle ne crée rien."
)
STRAY_FILES = (
    "oublier a laissé d'autres fichiers que la base dans son dossier de travail ou dans "
    "/tmp\u00a0: une copie des données de l'élève peut s'y cacher. oublier ne crée aucun fichier."
)

SERVICE_CLOSED = (
    "oublier a fermé le service ou sa connexion (service.close()), ou supprimé son -wal\u00a0: le "
    "tuteur, qui tourne encore, en a besoin, et ce n'est pas oublier qui a vidé le -wal. Ne "
    "touchez ni au service ni au -wal\u00a0: videz-le avec le PRAGMA du checkpoint. Où "
    "regarder\u00a0: leçon 4, section «\u00a03. Ce qui reste lisible dans le fichier\u00a0»."
)


# where the lessons show a transaction validated, rolled back by an error or by a close
SEE_TRANSACTION = (
    "Où regarder\u00a0: leçon 4, section «\u00a05. Valider ou annuler une transaction\u00a0»."
)
SESSIONS_LEFT = "des sessions de l'élève existent encore dans la table sessions"
USER_STATE_LEFT = "la ligne user_states de l'élève existe encore"
_NOT_COMMITTED = (
    "{left}, et la transaction d'oublier n'a jamais été validée (sa connexion laissée ouverte, "
    "ou fermée avant la validation)\u00a0: ce qu'elle avait supprimé est annulé. "
)
_ROLLED_BACK = (
    "{left}\u00a0: oublier s'est arrêtée sur l'erreur citée plus bas avant que cette "
    "suppression soit validée, et une transaction jamais validée est annulée, tout ce qu'elle "
    "avait supprimé compris. Corrigez d'abord cette erreur. "
)
# the call raised before any connection of the student's deleted a row: no transaction to tell
_STOPPED_BEFORE = (
    "{left}\u00a0: oublier s'est arrêtée sur l'erreur citée plus bas avant d'avoir rien "
    "supprimé avec sqlite3. Corrigez d'abord cette erreur."
)
USER_STATE_NOT_COMMITTED = _NOT_COMMITTED.format(left=USER_STATE_LEFT) + SEE_TRANSACTION
USER_STATE_ROLLED_BACK = _ROLLED_BACK.format(left=USER_STATE_LEFT) + SEE_TRANSACTION
USER_STATE_WITH_SESSIONS = (
    f"{USER_STATE_LEFT}, comme ses sessions (critère 1)\u00a0: si vous avez écrit ces "
    "suppressions, elles n'ont pas été validées, ou un try/except a caché l'erreur qui a annulé "
    "leur transaction. " + SEE_TRANSACTION
)


def _unvalidated(left: str) -> Callable[[ScenarioResult], str | None]:
    """Why `left` is still there when the call raised (the error first: a misspelt table in a
    ``with conn:`` block is no missing commit), or when its transaction was never validated (a
    connection left open, or closed or freed before its commit: stop 59, told as a DELETE never
    written); None otherwise."""

    def explain(result: ScenarioResult) -> str | None:
        outcome = result.first(Role.ERASE).outcome
        if outcome is None:
            return None
        if outcome.error is not None and outcome.nothing_deleted:
            return _STOPPED_BEFORE.format(left=left)
        if outcome.error is not None:
            return _ROLLED_BACK.format(left=left) + SEE_TRANSACTION
        if outcome.open_transaction or outcome.rolled_back:
            return _NOT_COMMITTED.format(left=left) + SEE_TRANSACTION
        return None

    return explain


_user_state_unvalidated = _unvalidated(USER_STATE_LEFT)


def _explain_user_state(result: ScenarioResult) -> str | None:
    """As for the sessions; and with the sessions left too, never « supprimer ses sessions ne
    suffit pas » (a try/except that hid the error of a ``with`` block rolled both back)."""
    if (why := _user_state_unvalidated(result)) is not None:
        return why
    if not _erased_sessions(result.first(Role.ERASE)):
        return USER_STATE_WITH_SESSIONS
    return None


RAISES_FOR_EVERYONE = (
    "oublier lève une erreur pour un user_id ordinaire aussi\u00a0: ce n'est pas une affaire "
    "d'apostrophe. Corrigez d'abord cette erreur (citée ci-dessous)."
)


# The apostrophe's learner was erased without an error, yet a later id erased others without
# one: either the id enters SQL text quoted with "…", or it is compared by LIKE or GLOB, whose
# wildcards match other learners even as a parameter. The run cannot tell which: both are said,
# rather than only the first, which blames a parameterised query.
MATCHES_OTHERS = (
    "avec certains user_id, oublier efface aussi d'autres élèves, sans lever d'erreur\u00a0: "
    "soit le user_id entre dans le texte SQL (entre guillemets doubles, une apostrophe passe mais "
    "un guillemet en sort), soit la requête le compare avec LIKE ou GLOB, pour qui certains "
    "caractères sont des jokers, même passé en paramètre. Passez-le en paramètre et comparez-le "
    "avec =. Où regarder\u00a0: leçon 4, section «\u00a04. Des requêtes paramétrées\u00a0»."
)


RAISES_FROM_THE_FIRST_CALL = (
    "oublier lève une erreur dès son premier appel, pas seulement quand on la rappelle\u00a0: "
    "ce n'est pas une affaire de second appel. Corrigez d'abord cette erreur (citée ci-dessous)."
)


def _explain_again(result: ScenarioResult) -> str | None:
    """The first call raised as well as the calls after it (a lock its own open transaction
    holds, say): the error, not calling oublier again, is what to mend."""
    first = result.first(Role.ERASE).outcome
    later = [c.outcome for role in (Role.AGAIN, Role.UNKNOWN) for c in result.of(role)]
    if (
        first is not None
        and first.error is not None
        and any(o is not None and o.error is not None for o in later)
    ):
        return RAISES_FROM_THE_FIRST_CALL
    return None


def _explain_quoted(result: ScenarioResult) -> str | None:
    """An error the plain learner's call raised too is not the quotes' fault; ids that raised
    nothing yet changed the base matched others (told only when the apostrophe's call was
    clean, so a query built by formatting keeps the criterion's own message)."""
    if not _clean(result.first(Role.ERASE).outcome):
        return RAISES_FOR_EVERYONE
    if _clean(result.first(Role.QUOTED).outcome) and all(
        _clean(c.outcome) for c in result.of(Role.HOSTILE)
    ):
        return MATCHES_OTHERS
    return None


def _explain_file(result: ScenarioResult) -> str | None:
    call = result.first(Role.ERASE)
    if _facts(call).extra_objects:
        return EXTRA_OBJECTS
    if call.outcome is not None and call.outcome.stray_files:
        return STRAY_FILES
    if call.outcome is not None and call.outcome.service_closed:
        return SERVICE_CLOSED
    return None


CRITERIA: tuple[Criterion, ...] = (
    Criterion(
        key="sessions",
        number=1,
        title="Toutes les sessions de l'élève dans l'application du tuteur ont disparu",
        roles=(Role.ERASE,),
        holds=lambda r: _erased_sessions(r.first(Role.ERASE)),
        failure=f"{SESSIONS_LEFT}. Où regarder\u00a0: leçon 4, section «\u00a01. Supprimer "
        "toutes les sessions par l'API\u00a0».",
        explain=_unvalidated(SESSIONS_LEFT),
        hidden_hint=" oublier doit effacer l'élève reçu en paramètre (user_id), pas un nom "
        "écrit en dur.",
        visible_test="sessions",
        hidden_test="sessions_cache",
    ),
    Criterion(
        key="orphelins",
        number=2,
        title="Aucun de ses événements ne reste dans la table events (pas d'orphelins)",
        roles=(Role.ERASE,),
        holds=lambda r: _facts(r.first(Role.ERASE)).events_left == 0,
        failure="des événements de l'élève restent dans la table events, sans leur session "
        "(orphelins)\u00a0: avec sqlite3, la suppression en cascade n'a pas toujours lieu, et "
        "la demander dans une transaction déjà ouverte est sans effet. Où regarder\u00a0: leçon "
        "4, section «\u00a02. Le piège de foreign_keys\u00a0».",
        gate=Gate.SESSIONS_ERASED,
        hidden_test="orphelins",
    ),
    Criterion(
        key="user_states",
        number=3,
        title="Sa ligne user_states (l'état user:) a disparu",
        roles=(Role.ERASE,),
        holds=lambda r: not _facts(r.first(Role.ERASE)).user_state_left,
        failure=f"{USER_STATE_LEFT}\u00a0: supprimer ses sessions ne suffit pas, l'état "
        "user: est rangé à part, sans lien avec une session. Où regarder\u00a0: leçon 4, "
        "section «\u00a01. Supprimer toutes les sessions par l'API\u00a0».",
        explain=_explain_user_state,
        hidden_hint=" oublier doit effacer l'élève reçu en paramètre (user_id), pas un nom "
        "écrit en dur.",
        visible_test="user_states",
        hidden_test="user_states_cache",
    ),
    Criterion(
        key="autres",
        number=4,
        title="Les autres élèves, les autres applications et app_states sont intacts",
        roles=(Role.ERASE,),
        holds=lambda r: _facts(r.first(Role.ERASE)).others_intact,
        failure="oublier a modifié ou supprimé des données qui ne sont pas à cet élève (autres "
        "élèves, autres applications ou app_states). Où regarder\u00a0: leçon 3, section "
        "«\u00a0Quatre tables\u00a0» (ce qui identifie une ligne de chaque table).",
        gate=Gate.SESSIONS_ERASED,
        visible_test="autres",
        hidden_test="autres_cache",
    ),
    Criterion(
        key="deux_fois",
        number=5,
        title="Un second appel, ou un élève inconnu, ne lève pas d'erreur et ne change rien",
        roles=(Role.ERASE, Role.AGAIN, Role.UNKNOWN),
        holds=lambda r: _unchanged_after(r, Role.ERASE, (Role.AGAIN, Role.UNKNOWN)),
        failure="un second appel pour le même élève, ou un appel pour un élève inconnu, lève "
        "une erreur ou modifie encore la base\u00a0: oublier doit pouvoir être rappelée sans "
        "risque. Où regarder\u00a0: leçon 4, section «\u00a0Ce que devra garantir oublier\u00a0».",
        gate=Gate.CORRECT_ERASURE,
        explain=_explain_again,
        hidden_test="deux_fois",
    ),
    Criterion(
        key="guillemets",
        number=6,
        title="Un user_id quelconque (apostrophes comprises) est traité sans erreur ni excès",
        roles=(Role.QUOTED, Role.HOSTILE),
        holds=lambda r: (
            _clean(r.first(Role.QUOTED).outcome)
            and _unchanged_after(r, Role.QUOTED, (Role.HOSTILE,))
        ),
        failure="avec un user_id qui contient une apostrophe ou des guillemets, oublier échoue "
        "ou efface ce qui ne la concerne pas\u00a0: le user_id entre sans doute dans le texte "
        "SQL. Où "
        "regarder\u00a0: leçon 4, section «\u00a04. Des requêtes paramétrées\u00a0».",
        gate=Gate.CORRECT_ERASURE,
        gate_role=Role.QUOTED,
        explain=_explain_quoted,
        hidden_test="guillemets",
    ),
    Criterion(
        key="fichier",
        number=7,
        title="Plus rien de l'élève n'est lisible dans le fichier de la base ni dans son -wal",
        roles=(Role.ERASE,),
        holds=_file_clean,
        explain=_explain_file,
        failure="des données de l'élève sont encore lisibles dans le fichier de la base ou dans "
        "son -wal (pages libérées mais pas effacées). Où regarder\u00a0: leçon 4, section "
        "«\u00a03. Ce qui reste lisible dans le fichier\u00a0».",
        gate=Gate.CORRECT_ERASURE,
        hidden_test="fichier",
    ),
)

TESTS: dict[str, Test] = {t.id: t for c in CRITERIA for t in c.tests}
_BY_KEY = {c.key: c for c in CRITERIA}
# criterion key -> its French title (the hooks and the learner's verifier name criteria by it)
TITLES: dict[str, str] = {c.key: c.title for c in CRITERIA}


def grade_titles() -> dict[str, str]:
    """grade_id of every graded test -> the French title of its criterion."""
    return {t.grade_id: _BY_KEY[t.criterion].title for t in TESTS.values()}


# -- French messages --------------------------------------------------------------------------

NOT_WRITTEN = (
    "oublier n'est pas encore écrite\u00a0: remplacez «\u00a0raise NotImplementedError()"
    "\u00a0» par votre code."
)
HIDDEN_PREFIX = "pour d'autres élèves et d'autres identifiants que ceux de l'exemple, "
GATE_MESSAGES = {
    Gate.SESSIONS_ERASED: "ce point ne compte que si oublier a d'abord effacé les sessions de "
    "l'élève, ce qui n'est pas le cas.",
    Gate.CORRECT_ERASURE: "ce point ne compte que si oublier a d'abord effacé l'élève en entier "
    "et rien d'autre (critères 1 à 4\u00a0: ses sessions, ses événements, sa ligne "
    "user_states, et aucune autre donnée), ce qui n'est pas le cas.",
}
QUOTED_GATE = (
    "ce point ne compte que si oublier efface en entier, et sans rien d'autre, tout élève qu'on "
    "lui donne\u00a0: c'est le cas de celui des critères 1 à 4, pas d'un élève dont le user_id "
    "contient une apostrophe. oublier doit effacer l'élève reçu en paramètre (user_id), quel "
    "qu'il soit."
)
NOT_ASYNC = (
    "De plus, oublier n'est pas une fonction asynchrone\u00a0: définissez-la avec async def "
    "(le tuteur l'appelle avec await)."
)
OPEN_TRANSACTION_START = "Votre connexion garde une transaction ouverte\u00a0: "
OPEN_TRANSACTION = (
    OPEN_TRANSACTION_START + "ce qu'elle a supprimé n'est pas validé, donc perdu, VACUUM refuse "
    "de s'exécuter dans une transaction, et elle bloque les écritures suivantes. " + SEE_TRANSACTION
)
# after VACUUM's own refusal, quoted just before: VACUUM is not said twice
OPEN_AFTER_VACUUM = (
    OPEN_TRANSACTION_START + "ce qu'elle a supprimé n'est pas validé, donc perdu, et elle "
    "bloque les écritures suivantes. " + SEE_TRANSACTION
)
# Python 3.12+'s autocommit=False begins a new transaction at each commit: VACUUM after commit()
# is refused all the same, and « validez-la d'abord » is what the learner did
AUTOCOMMIT_OFF = (
    "Avec autocommit=False, une transaction se rouvre à chaque validation (commit)\u00a0: "
    "passez la connexion en autocommit=True avant VACUUM."
)
VACUUM_REFUSED = "cannot VACUUM from within a transaction"  # SQLite's words
MISSING_FUNCTION = "aucune fonction oublier n'est définie dans la cellule prévue."


def _seconds(value: float) -> str:
    return french_number(value) + "\u00a0s"


# Exception class names shown for a hidden scenario: Python's and sqlite3's own, nothing else.
KNOWN_ERRORS = frozenset(
    name
    for module in (builtins, sqlite3)
    for name, value in vars(module).items()
    if isinstance(value, type) and issubclass(value, BaseException)
)
HIDDEN_LOAD = (
    "la cellule de oublier lève une exception avant même d'appeler oublier (pour les tests "
    "cachés, ni son nom ni son message ne sont montrés)."
)
HIDDEN_SYNTAX = "la cellule de oublier ne se lit pas (SyntaxError)."
LIMIT_MESSAGES = {
    "memory": "l'ensemble des processus de votre rendu a dépassé la mémoire permise",
    "cpu": "l'ensemble des processus de votre rendu a dépassé le temps de calcul permis",
    "protocol": "le compte rendu du processus qui exécutait oublier n'était pas valide",
    "bad_report": "le processus qui exécutait oublier a écrit lui-même sur le canal où le "
    "correcteur reçoit le compte rendu de l'appel (compte rendu forgé ou répété)",
}


def _error_name(error_type: str, hidden: bool) -> str:
    """An exception's class name as it may be shown: for a hidden scenario, only a known one."""
    if hidden and error_type not in KNOWN_ERRORS:
        return "une exception"
    return error_type[:100]


def load_message(
    reason: str, error_type: str = "", error_message: str = "", *, hidden: bool = False
) -> str:
    """Why the cell gave no oublier, in French (for a hidden scenario, no text of the cell's)."""
    if reason == "missing":
        return MISSING_FUNCTION
    if hidden:
        return HIDDEN_SYNTAX if reason == "syntax" else HIDDEN_LOAD
    if reason == "syntax":
        return f"la cellule de oublier ne se lit pas (SyntaxError)\u00a0: {error_message}"
    return (
        f"la cellule de oublier lève {error_type} avant même d'appeler oublier\u00a0: "
        f"{error_message}"
    )


def unfinished_message(result: ScenarioResult) -> str:
    """Why the calls of `result` that never ended could not be judged, in French."""
    limit = _seconds(result.timeout)
    if result.end is RunEnd.TIMED_OUT and result.stalled and result.stalled.open_transaction:
        return (
            f"oublier n'a pas terminé en {limit}\u00a0: elle attendait le verrou de la base, "
            "que garde votre propre connexion (transaction ouverte, jamais validée ni fermée "
            "avant l'appel suivant). Où regarder\u00a0: leçon 5, section «\u00a0Fermer les "
            "connexions\u00a0»."
        )
    if result.end is RunEnd.TIMED_OUT:
        return (
            f"oublier n'a pas terminé en {limit} (boucle sans fin\u00a0? attente trop "
            f"longue\u00a0?)\u00a0: ce point n'a pas pu être vérifié."
        )
    if result.limit in LIMIT_MESSAGES:
        return (
            f"{LIMIT_MESSAGES[result.limit]}\u00a0: tout a été arrêté, et ce point n'a pas "
            "pu être vérifié."
        )
    return (
        "le processus qui exécutait oublier s'est arrêté avant la fin (sortie du programme, "
        "mémoire dépassée\u00a0?)\u00a0: ce point n'a pas pu être vérifié."
    )


def _problem(call: CallResult, result: ScenarioResult) -> str | None:
    """Why `call` left nothing to judge, in French; None if its file can be judged."""
    if call.outcome is None or call.facts is None:
        return unfinished_message(result)
    if not call.facts.present:
        return (
            "la base de données n'existe plus après oublier\u00a0: il faut effacer un élève, "
            "pas le fichier."
        )
    if not call.facts.readable:
        # SQLite's reasons may quote names the student's code chose (a table, a broken schema):
        # for the hidden inputs, where those names may hold them, none is shown
        detail = "" if result.scenario.hidden else f" ({str(call.facts.problem)[:300]})"
        return (
            f"la base de données est abîmée après oublier{detail}\u00a0: il faut "
            "effacer des lignes, pas des tables."
        )
    return None


NO_AWAIT = (
    " Un appel au service sans await renvoie une coroutine, pas son résultat\u00a0: écrivez "
    "await devant (await service.list_sessions(...))."
)


# a service call without await raises nothing: Python only warns that the coroutine was never
# awaited, and the call did nothing
UNAWAITED = (
    "De plus, un appel au service n'a pas été attendu (coroutine jamais attendue)\u00a0: sans "
    "await, il ne fait rien. Écrivez await devant (par exemple await service.delete_session(...))."
)


# a connection of the student's never closed: the TP asks to close each one
UNCLOSED = (
    "De plus, oublier ne ferme pas une connexion sqlite3 qu'elle ouvre (un bloc with valide "
    "la transaction, il ne ferme pas la connexion)\u00a0: Python la fermera, à un moment "
    "qu'il choisit, et d'ici là elle garde le fichier ouvert, et son -wal avec. Où "
    "regarder\u00a0: leçon 5, section «\u00a0Fermer les connexions\u00a0»."
)
# the same, when the call raised: a close() after the line of the error never ran
UNCLOSED_AFTER_ERROR = (
    "De plus, arrêtée par cette erreur, oublier n'a pas fermé une connexion sqlite3 qu'elle "
    "avait ouverte\u00a0: un close() écrit après la ligne de l'erreur ne s'exécute pas. "
    "Fermez-la dans le finally d'un bloc try (comme compter() dans la leçon 4)\u00a0: il "
    "s'exécute même après une erreur."
)
# a helper or an import of another cell: verifier and grading read the oublier cell alone
OTHER_CELL = (
    " Un nom défini dans une autre cellule\u00a0? Seule la cellule oublier est lue, pour "
    "verifier comme pour la note\u00a0: définissez-le (ou importez-le) dans cette cellule."
)


_SQLITE_ERRORS = {
    cls.__name__
    for cls in vars(sqlite3).values()
    if isinstance(cls, type) and issubclass(cls, sqlite3.Error)
}


def _raised(outcome: CallOutcome, hidden: bool) -> str:
    error = outcome.error
    assert error is not None
    message = error.message.strip()[:300]
    if error.type in _SQLITE_ERRORS:  # SQLite's English, in French when known
        message = sql_in_french(message) or message
    name = _error_name(error.type, hidden)
    # the learner's most common slips, whatever the input: said even for the hidden ones
    no_await = NO_AWAIT if "'coroutine' object" in error.message else ""
    no_await += OTHER_CELL if error.type == "NameError" else ""
    if outcome.autocommit_off and VACUUM_REFUSED in error.message:
        no_await += " " + AUTOCOMMIT_OFF
    if hidden or not message:  # hidden inputs may appear in an exception's message
        return f"De plus, oublier a levé {name}.{no_await}"
    end = "" if message.endswith((".", "!", "?", "…")) else "."
    return f"De plus, oublier a levé {name}\u00a0: {message}{end}{no_await}"


def _notes(calls: list[CallResult], hidden: bool) -> str:
    """What went wrong while the calls ran (the first call that says something)."""
    for call in calls:
        outcome = call.outcome
        if outcome is None:
            continue
        parts = []
        if outcome.not_async:
            parts.append(NOT_ASYNC)
        elif outcome.error is not None:
            parts.append(_raised(outcome, hidden))
        if outcome.unawaited and not any(NO_AWAIT in part for part in parts):
            parts.append(UNAWAITED)
        if outcome.open_transaction:
            refused = outcome.error is not None and VACUUM_REFUSED in outcome.error.message
            parts.append(OPEN_AFTER_VACUUM if refused else OPEN_TRANSACTION)
        elif outcome.unclosed:
            parts.append(UNCLOSED if outcome.error is None else UNCLOSED_AFTER_ERROR)
        if parts:
            return " " + " ".join(parts)
    return ""


def call_notes(result: ScenarioResult) -> str:
    """What went wrong in the calls even when every criterion holds (a service call without
    await, a transaction left open), to follow a colon (lower case first); "" if nothing did."""
    notes = _notes(list(result.calls), result.scenario.hidden).strip().removeprefix("De plus, ")
    return notes[:1].lower() + notes[1:]


def not_written(result: ScenarioResult) -> bool:
    """The untouched stub: the first call raised NotImplementedError."""
    erase = result.of(Role.ERASE)
    outcome = erase[0].outcome if erase else None
    return bool(outcome and outcome.error and outcome.error.type == "NotImplementedError")


def _gate_holds(criterion: Criterion, result: ScenarioResult) -> bool:
    call = result.first(criterion.gate_role)
    if criterion.gate is Gate.SESSIONS_ERASED:
        return _erased_sessions(call)
    if criterion.gate is Gate.CORRECT_ERASURE:
        # the statement's rule: criteria 5 to 7 count only if criteria 1 to 4 hold (the
        # learner's erasure), and criterion 6's own learner is erased as well
        return _erased_in_full(result.first(Role.ERASE)) and _correct_erasure(call)
    return True


def load_problem(result: ScenarioResult) -> str | None:
    """Why the cell gave no oublier to run in `result`, in French; None if it did."""
    failure = result.load_failure
    if failure is None:
        return None
    error = failure.error
    return load_message(
        failure.reason,
        error.type if error else "",
        error.message if error else "",
        hidden=result.scenario.hidden,
    )


def _with_notes(message: str, notes: str) -> str:
    """A failing criterion's message and the notes about the call: where to look said once."""
    if SEE_TRANSACTION in message:
        notes = notes.replace(" " + SEE_TRANSACTION, "")
    return message + notes


def judge(criterion: Criterion, result: ScenarioResult) -> Verdict:
    """The verdict of one criterion on one scenario's run."""
    load = load_problem(result)
    if load is not None:
        return Verdict(False, load)
    if not_written(result):
        return Verdict(False, NOT_WRITTEN)
    hidden = result.scenario.hidden
    prefix = HIDDEN_PREFIX if hidden else ""
    roles = tuple(dict.fromkeys((criterion.gate_role, *criterion.roles)))
    calls = [c for role in roles for c in result.of(role)]
    notes = _notes(calls, hidden)
    for call in calls:
        problem = _problem(call, result)
        if problem:
            return Verdict(False, _with_notes(prefix + problem, notes))
    gate_ok = _gate_holds(criterion, result)
    if gate_ok and criterion.holds(result):
        return Verdict(True, "réussi")
    # An error only on this criterion's own inputs (the plain learner's call went fine) is what
    # the criterion is about: say so rather than that the erasure was incomplete.
    own_error = _clean(result.first(Role.ERASE).outcome) and any(
        not _clean(c.outcome) for c in calls if c.role is not Role.ERASE
    )
    if not gate_ok and not own_error:
        gate = GATE_MESSAGES[criterion.gate]
        if criterion.gate_role is Role.QUOTED and _erased_in_full(result.first(Role.ERASE)):
            gate = QUOTED_GATE  # the plain learner is erased: only the quoted one is not
        return Verdict(False, _with_notes(prefix + gate, notes))
    sharper = criterion.explain(result) if criterion.explain and gate_ok else None
    return Verdict(False, _with_notes(prefix + (sharper or criterion.failure), notes))


def judge_scenario(result: ScenarioResult) -> dict[str, Verdict]:
    """criterion key -> verdict, for every criterion."""
    return {c.key: judge(c, result) for c in CRITERIA}


def judge_all(results: dict[str, ScenarioResult]) -> dict[str, dict[str, Verdict]]:
    """scenario name -> criterion key -> verdict. A criterion met on the example but not on the
    hidden inputs gets its ``hidden_hint`` (typically: a name written in the code)."""
    verdicts = {name: judge_scenario(result) for name, result in results.items()}
    shown = [n for n, r in results.items() if not r.scenario.hidden]
    for name, result in results.items():
        if not result.scenario.hidden or not shown:
            continue
        for criterion in CRITERIA:
            verdict = verdicts[name][criterion.key]
            if criterion.hidden_hint and not verdict.ok and verdicts[shown[0]][criterion.key].ok:
                verdicts[name][criterion.key] = Verdict(
                    False, verdict.message + criterion.hidden_hint
                )
    return verdicts


def statement_table() -> list[tuple[str, int, int]]:
    """The statement's table: (numbered title, points, points of visible tests) per criterion."""
    return [
        (
            f"{c.number}. {c.title}",
            c.points,
            sum(t.points for t in c.tests if t.visible),
        )
        for c in CRITERIA
    ]
