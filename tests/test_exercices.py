"""course.exercices: SQLite's messages a learner's query meets, in French, read from SQLite's
own errors (its wording is the contract: a version that changes it falls back to quoting it);
a check that fails is one French line with its hint; the learner's own error keeps its
traceback."""

from __future__ import annotations

import sqlite3

import pytest

from course.exercices import ExerciceNonReussi, sqlite_en_francais, verification

CASES = {
    "SELECT * FROM user_state": "la table «\u00a0user_state\u00a0» n'existe pas dans ce fichier",
    "SELECT etat FROM t": "la colonne «\u00a0etat\u00a0» n'existe pas",
    "SELEC 1": "erreur de syntaxe SQL près de «\u00a0SELEC\u00a0»",
    "SELECT (1": "requête SQL incomplète (parenthèse ou apostrophe à fermer\u00a0?)",
    "SELECT json_extract('{', '$.a')": "JSON mal formé",
    "SELECT json_extract('{}', 'a')": "chemin JSON invalide\u00a0: a",
    "SELECT ? FROM t": "la requête attend 1 valeur(s) pour ses «\u00a0?\u00a0» et en reçoit 2",
    "SELECT 1; SELECT 2": "une seule instruction SQL à la fois",
    "SELECT 'a": 'élément SQL non reconnu\u00a0: "\'a"',
    # second learner's walk, stop 58
    "SELECT json_extrat('{}', '$.a')": (
        "la fonction SQL «\u00a0json_extrat\u00a0» n'existe pas (son nom est-il bien écrit\u00a0?)"
    ),
    "SELECT x FROM t, t AS u": (
        "la colonne «\u00a0x\u00a0» est dans deux tables de la requête\u00a0: précisez laquelle "
        "(sessions.x, par exemple)"
    ),
}


@pytest.mark.parametrize("query", CASES)
def test_sqlite_s_own_messages_in_french(query):
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE t (x)")
    with pytest.raises(sqlite3.Error) as raised:
        db.execute(query, (1, 2) if "?" in query else ())
    assert sqlite_en_francais(raised.value) == CASES[query], str(raised.value)


def test_an_unknown_message_is_quoted_as_it_is():
    said = sqlite_en_francais(sqlite3.OperationalError("database is locked"))
    assert said == "SQLite a répondu «\u00a0database is locked\u00a0»"


def test_a_failed_check_is_one_french_line_with_its_hint_and_a_bug_keeps_its_traceback():
    with pytest.raises(ExerciceNonReussi) as failed:
        with verification("requete_niveau"):
            raise AssertionError("Aucune ligne\u00a0: vérifiez la clause WHERE.")
    (line,) = failed.value._render_traceback_()
    assert line.startswith("ExerciceNonReussi\u00a0: Aucune ligne")
    assert line.endswith(
        "Bloqué\u00a0? indice(1, 'requete_niveau'), puis indice(2, 'requete_niveau') et "
        "indice(3, 'requete_niveau')."
    )
    with pytest.raises(ExerciceNonReussi, match="pas encore écrit"):
        with verification("requete_niveau"):
            raise NotImplementedError

    def their_function():
        return 1 + "a"

    with pytest.raises(TypeError):  # the learner's own bug: its traceback points into their code
        with verification("requete_niveau"):
            their_function()
    with verification("requete_niveau"):  # passed: nothing said
        pass


def test_what_their_function_gave_back_that_the_check_cannot_use_is_said_in_french():
    """Third learner's walk, stop 57: lesson 3's requete_niveau without its return gave
    « TypeError: execute() argument 1 must be str, not None » through the check's own line;
    lesson 2's get_session without await, « 'coroutine' object has no attribute 'id' »; a bare
    assert of theirs, an empty message; lesson 7's PostgreSQL refusals stayed English."""
    import sqlite3 as sql

    db = sql.connect(":memory:")
    with pytest.raises(ExerciceNonReussi) as failed:
        with verification("requete_niveau"):
            db.execute(None)
    said = failed.value._render_traceback_()[0]
    assert "ce que renvoie votre fonction ne convient pas à la vérification" in said, said
    assert "un return oublié\u00a0?" in said
    with pytest.raises(ExerciceNonReussi, match="une vérification a échoué"):
        with verification("requete_niveau"):
            raise AssertionError
    postgres = type("UndefinedTableError", (Exception,), {"__module__": "asyncpg.exceptions"})
    with pytest.raises(ExerciceNonReussi) as failed:
        with verification("oublier_conversation"):
            raise postgres('relation "session" does not exist')
    assert "la table «\u00a0session\u00a0» n'existe pas" in str(failed.value)
    interface = type("InterfaceError", (Exception,), {"__module__": "asyncpg.exceptions._base"})
    with pytest.raises(ExerciceNonReussi) as failed:  # second learner's walk, stop 58
        with verification("oublier_conversation"):
            raise interface(
                "the server expects 3 arguments for this query, 2 were passed\n"
                "HINT: Check the query against the passed list of arguments."
            )
    assert "la requête attend 3 valeur(s) pour ses $1, $2… et en reçoit 2" in str(failed.value)
    with pytest.raises(ValueError):  # nor SQL nor a type: as Python says it
        with verification("oublier_conversation"):
            raise ValueError("x")


def test_a_check_run_again_once_the_lesson_closed_its_connection_says_which_cell(tmp_path):
    """Learner's walk, stop 58: a check run again after the lesson's last cells closed the
    service (lessons 2, 5) gave 58 lines of traceback; lesson 3's closed sqlite3 connection was
    « votre requête est refusée : … Cannot operate on a closed database. », blaming her query."""
    import asyncio

    from course.sessions import SqliteSessionService

    async def closed_service() -> None:
        service = SqliteSessionService(tmp_path / "l.db")
        await service.close()
        with verification("derniere_session_complete"):
            await service.list_sessions(app_name="a", user_id="u")

    for run in (
        lambda: asyncio.run(closed_service()),
        lambda: _closed_connection().execute("SELECT 1"),
    ):
        with pytest.raises(ExerciceNonReussi) as failed:
            with verification("requete_niveau"):
                run()
        assert str(failed.value).startswith("la connexion de la leçon est fermée"), failed.value
        assert "Exécuter tout au-dessus de la cellule sélectionnée" in str(failed.value)


def test_a_check_run_in_a_restarted_kernel_says_to_run_what_precedes():
    """Third learner's walk, stop 59: a check run alone after a restart (lesson 5, about
    restarting) showed « NameError: name 'service' is not defined »: it names what is missing
    and what to run. A NameError in the learner's own function keeps its traceback."""
    with pytest.raises(ExerciceNonReussi) as failed:
        with verification("messages_de_l_eleve"):
            service_jamais_cree  # noqa: B018, F821 - the name the restarted kernel lacks
    said = str(failed.value)
    assert said.startswith("«\u00a0service_jamais_cree\u00a0» n'existe pas dans ce noyau"), said
    assert "Exécuter tout au-dessus de la cellule sélectionnée" in said

    def their_function() -> None:
        return nom_mal_ecrit  # noqa: F821 - their bug, in their code

    with pytest.raises(NameError):
        with verification("messages_de_l_eleve"):
            their_function()


def _closed_connection() -> sqlite3.Connection:
    db = sqlite3.connect(":memory:")
    db.close()
    return db


def test_a_service_method_called_by_position_gets_a_french_note():
    """Third learner's walk, stop 59: « list_sessions() takes 1 positional argument but 3
    were given » and « delete_session() missing 1 required keyword-only argument: 'user_id' »
    came in English only. The learner's traceback stays (it points at their line), with a
    French note on the service's named arguments."""
    import asyncio

    from course.sessions import InMemorySessionService

    service = InMemorySessionService()

    async def their_function(kind: str):
        if kind == "position":
            return await service.list_sessions("tuteur", "alice")
        return await service.delete_session(app_name="tuteur", session_id="s")

    for kind in ("position", "missing"):
        with pytest.raises(TypeError) as raised:
            with verification("derniere_session_complete"):
                asyncio.run(their_function(kind))
        notes = getattr(raised.value, "__notes__", [])
        assert any("nommez chaque argument" in n for n in notes), (kind, raised.value, notes)


def test_a_forgotten_await_is_said_in_french():
    """Learner's walk, stop 58: a forgotten await in her own function kept only Python's
    English (« 'coroutine' object has no attribute 'sessions' »), and a call left without await
    in lesson 7 (« coroutine 'sql' was never awaited ») failed the check on what it did not
    do. Her traceback stays, with a French note; the check's failure says the call."""
    import gc

    async def list_sessions():
        return []

    def their_function():
        pending = list_sessions()
        try:
            return pending.sessions  # without await
        finally:
            pending.close()  # (the test's own tidying: no warning left for later)

    with pytest.raises(AttributeError) as raised:
        with verification("derniere_session_complete"):
            their_function()
    assert "Ajoutez await devant l'appel de la ligne indiquée" in raised.value.__notes__[0]

    async def sql():
        return None

    with pytest.raises(ExerciceNonReussi) as failed:
        with verification("oublier_conversation"):
            sql()  # never awaited: Python warns once the coroutine is freed
            gc.collect()
            raise AssertionError("Il reste des événements effacés.")
    assert "Il reste des événements effacés." in str(failed.value)
    assert "un appel sans await\u00a0: sql() a été appelée sans être attendue" in str(failed.value)


def test_a_function_written_without_async_def_is_said_so():
    """Fourth learner's walk (h60b): lesson 2's derniere_session_complete written with def,
    not async def, was told « ce que renvoie votre fonction ne convient pas … (TypeError :
    object NoneType can't be used in 'await' expression) : … (un return oublié ? un await ?
    async def ?) »: Python's English, and two guesses that cannot be the cause (a forgotten
    return or await inside an async def still gives something await accepts)."""
    import asyncio

    def derniere_session_complete(service, user_id):
        return None

    async def check() -> None:
        with verification("derniere_session_complete"):
            await derniere_session_complete(None, "alice")

    with pytest.raises(ExerciceNonReussi) as failed:
        asyncio.run(check())
    said = str(failed.value)
    assert said.startswith(
        "votre fonction n'est pas asynchrone : la vérification l'appelle avec await, "
        "définissez-la avec async def"
    ), said
    assert "can't be used" not in said and "return oublié" not in said
    assert said.endswith("indice(3, 'derniere_session_complete').")


def test_indice_without_a_name_climbs_the_exercise_last_checked_or_named(capsys):
    """Learner's walk, stop 58: after a lesson's check said « indice(1, 'x'), puis 2 et 3 »,
    indice(2) gave the graded TP's hint (its skeleton of oublier), counted against the TP. It
    now climbs the exercise last checked or named in this kernel."""
    from course import hints

    hints.set_tp_cause(hints.TP_START)
    with pytest.raises(ExerciceNonReussi):
        with verification("requete_niveau"):
            raise AssertionError("Aucune ligne.")
    assert hints.current_tp_cause() == "requete_niveau"
    hints.indice(1, "supprimer_inactives")
    assert hints.current_tp_cause() == "supprimer_inactives"
    hints.indice(2)
    assert "supprimer_inactives" in capsys.readouterr().out


def test_a_warning_during_a_check_is_shown_once_and_the_check_ends():
    """Second learner's walk, stop 58: a right answer that raised a DeprecationWarning
    (datetime.utcnow, named parameters given a tuple) hung the kernel: the warnings were shown
    again inside the recorder, each one recorded once more, the loop never ended (170 MB/s)."""
    import warnings

    with warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter("always")
        with verification("requete_niveau"):
            warnings.warn("datetime.utcnow() is deprecated", DeprecationWarning, stacklevel=1)
        with pytest.raises(ExerciceNonReussi):
            with verification("requete_niveau"):
                warnings.warn("encore", UserWarning, stacklevel=1)
                raise AssertionError("Aucune ligne.")
    said = [str(w.message) for w in shown]
    assert said == ["datetime.utcnow() is deprecated", "encore"], said
