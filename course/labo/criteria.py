"""The lab's criteria, their points, and the verdict of each test from measured facts.

Each test is one nbgrader grade cell (``grade_id == "test_" + id``) worth one point. Visible
tests check alice in the example database; hidden tests check another learner and the harder
points. A failed test explains in French what is missing, never how the hidden test works.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["CRITERES", "NOT_WRITTEN", "TESTS", "Test", "Verdict", "verdicts"]

# criterion -> title shown to students in the statement
CRITERES: dict[str, str] = {
    "sessions": "Toutes les sessions de l'élève dans l'application du tuteur ont disparu",
    "orphelins": "Aucun de ses événements ne reste dans la table events (pas d'orphelins)",
    "user_states": "Sa ligne user_states (l'état user:) a disparu",
    "autres": "Les autres élèves, les autres applications et app_states sont intacts",
    "deux_fois": "Un second appel, ou un élève inconnu, ne lève pas d'erreur et ne change rien",
    "guillemets": "Un user_id quelconque (apostrophes comprises) est traité sans erreur ni excès",
    "fichier": "Plus rien de l'élève n'est lisible dans le fichier de la base ni dans son -wal",
}


@dataclass(frozen=True)
class Test:
    id: str
    critere: str
    visible: bool
    points: int = 1

    @property
    def grade_id(self) -> str:
        return f"test_{self.id}"


TESTS: dict[str, Test] = {
    t.id: t
    for t in (
        Test("sessions", "sessions", True),
        Test("user_states", "user_states", True),
        Test("autres", "autres", True),
        Test("sessions_cache", "sessions", False),
        Test("orphelins", "orphelins", False),
        Test("user_states_cache", "user_states", False),
        Test("autres_cache", "autres", False),
        Test("deux_fois", "deux_fois", False),
        Test("guillemets", "guillemets", False),
        Test("fichier", "fichier", False),
    )
}

MESSAGES: dict[str, str] = {
    "sessions": "des sessions de l'élève existent encore dans la table sessions.",
    "sessions_cache": "pour un autre élève que celui de l'exemple, des sessions restent : oublier "
    "doit effacer l'élève reçu en paramètre (user_id), pas un nom écrit en dur.",
    "orphelins": "des événements de l'élève restent dans la table events, sans leur session "
    "(orphelins) : avec sqlite3, la suppression en cascade n'a lieu que si la connexion a "
    "exécuté PRAGMA foreign_keys = ON.",
    "user_states": "la ligne user_states de l'élève existe encore : supprimer ses sessions ne "
    "suffit pas, l'état user: est rangé à part, sans lien avec une session.",
    "user_states_cache": "pour un autre élève que celui de l'exemple, sa ligne user_states reste.",
    "autres": "oublier a modifié ou supprimé des données qui ne sont pas à cet élève (autres "
    "élèves, autres applications ou app_states) : chaque DELETE doit viser app_name ET user_id.",
    "autres_cache": "pour un autre élève que celui de l'exemple, des données qui ne sont pas à lui "
    "ont été modifiées ou supprimées.",
    "deux_fois": "un second appel pour le même élève, ou un appel pour un élève inconnu, lève une "
    "erreur ou modifie encore la base : oublier doit pouvoir être rappelée sans risque.",
    "guillemets": "avec un user_id qui contient une apostrophe, oublier échoue ou efface ce qui ne "
    "la concerne pas : passez user_id en paramètre de la requête (?), ne le collez jamais dans "
    "le texte SQL.",
    "fichier": "des données de l'élève sont encore lisibles dans le fichier de la base ou dans son "
    "-wal (pages libérées mais pas effacées) : terminez par VACUUM puis "
    "PRAGMA wal_checkpoint(TRUNCATE).",
}
NOT_WRITTEN = (
    "oublier n'est pas encore écrite : remplacez `raise NotImplementedError()` par "
    "votre code, puis relancez la cellule."
)
MESSAGE_NEEDS_ERASURE = (
    "ce point ne compte que si oublier a d'abord effacé les sessions de l'élève, ce qui n'est "
    "pas le cas."
)


@dataclass(frozen=True)
class Verdict:
    ok: bool
    message: str  # French, for the student


def _call_problem(
    name: str, journal: dict[str, Any], facts: dict[str, Any], timeout: float
) -> str | None:
    """Why call `name` produced no usable file, in French; None if it did."""
    if name not in journal:
        return (
            f"oublier n'a pas terminé en {timeout:g} s (boucle sans fin ? attente trop "
            "longue ?) ou a arrêté le processus : ce point n'a pas pu être vérifié."
        )
    fact = facts.get(name) or {}
    if not fact.get("present"):
        return (
            "la base de données n'existe plus après oublier : il faut effacer un élève, "
            "pas le fichier."
        )
    if not fact.get("valide"):
        return (
            "la base de données est abîmée après oublier ("
            + str(fact.get("probleme"))
            + ") : il faut effacer des lignes, pas des tables."
        )
    return None


def _error_note(name: str, journal: dict[str, Any]) -> str:
    err = (journal.get(name) or {}).get("erreur")
    if not err:
        return ""
    if err.get("type") == "PasAsync":
        return (
            " De plus, oublier n'est pas une fonction asynchrone : définissez-la avec "
            "async def (le tuteur l'appelle avec await)."
        )
    message = (err.get("message") or "").strip()[:300]
    if not message:  # e.g. `raise KeyError`: no dangling colon after the exception's name
        return f" De plus, oublier a levé {err.get('type')}."
    return f" De plus, oublier a levé {err.get('type')} : {message}"


def verdicts(
    load_error: str | None, journal: dict[str, Any], facts: dict[str, Any], timeout: float
) -> dict[str, Verdict]:
    """One verdict per test id from the runner's journal and the checker's facts."""
    if load_error:
        return {tid: Verdict(False, load_error) for tid in TESTS}

    def usable(name: str) -> str | None:
        return _call_problem(name, journal, facts, timeout)

    def erased_sessions(name: str) -> bool:
        return usable(name) is None and facts[name]["sessions_restantes"] == 0

    def no_error(name: str) -> bool:
        return name in journal and not journal[name].get("erreur")

    def same(a: str, b: str) -> bool:
        return (
            usable(a) is None
            and usable(b) is None
            and facts[a]["empreinte"] == facts[b]["empreinte"]
        )

    out: dict[str, Verdict] = {}

    def judge(tid: str, call: str, ok_fn, needs_erasure: bool = True) -> None:
        problem = usable(call)
        if problem:
            out[tid] = Verdict(False, problem + _error_note(call, journal))
        elif ok_fn():
            out[tid] = Verdict(True, "réussi")
        elif needs_erasure and not erased_sessions(call):
            out[tid] = Verdict(False, MESSAGE_NEEDS_ERASURE + _error_note(call, journal))
        else:
            out[tid] = Verdict(False, MESSAGES[tid] + _error_note(call, journal))

    f = facts
    judge("sessions", "A1", lambda: erased_sessions("A1"), needs_erasure=False)
    judge("sessions_cache", "C1", lambda: erased_sessions("C1"), needs_erasure=False)
    judge("orphelins", "A1", lambda: erased_sessions("A1") and f["A1"]["evenements_restants"] == 0)
    judge("user_states", "A1", lambda: not f["A1"]["user_state_restant"], needs_erasure=False)
    judge("user_states_cache", "C1", lambda: not f["C1"]["user_state_restant"], needs_erasure=False)
    judge("autres", "A1", lambda: erased_sessions("A1") and f["A1"]["autres_intacts"])
    judge("autres_cache", "C1", lambda: erased_sessions("C1") and f["C1"]["autres_intacts"])

    def twice_ok() -> bool:
        return (
            erased_sessions("A1")
            and no_error("B1")
            and no_error("B2")
            and same("A1", "B1")
            and same("A1", "B2")
        )

    judge_call = "B2" if "B2" in journal else ("B1" if "B1" in journal else "A1")
    if usable("A1") is None and not erased_sessions("A1"):
        out["deux_fois"] = Verdict(False, MESSAGE_NEEDS_ERASURE)
    else:
        judge("deux_fois", judge_call, twice_ok)
        if not out["deux_fois"].ok and usable(judge_call) is None:
            notes = _error_note("B1", journal) or _error_note("B2", journal)
            out["deux_fois"] = Verdict(False, MESSAGES["deux_fois"] + notes)

    def quotes_ok() -> bool:
        return no_error("D1") and erased_sessions("D1") and no_error("D2") and same("D1", "D2")

    judge_call = "D2" if "D2" in journal else "D1"
    judge("guillemets", judge_call, quotes_ok, needs_erasure=False)
    if not out["guillemets"].ok and usable(judge_call) is None:
        notes = _error_note("D1", journal) or _error_note("D2", journal)
        out["guillemets"] = Verdict(False, MESSAGES["guillemets"] + notes)

    def file_ok() -> bool:
        a = f["A1"]
        return (
            erased_sessions("A1")
            and a["evenements_restants"] == 0
            and not a["user_state_restant"]
            and not a["marqueurs"]
        )

    judge("fichier", "A1", file_ok)
    if ((journal.get("A1") or {}).get("erreur") or {}).get("type") == "NotImplementedError":
        # The stub's `raise NotImplementedError()` is still there: that is the one thing to say.
        out = {tid: v if v.ok else Verdict(False, NOT_WRITTEN) for tid, v in out.items()}
    return {tid: out[tid] for tid in TESTS}
