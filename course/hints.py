"""Les indices, un niveau à la fois\u00a0: ``indice(1)``, ``indice(2)``, ``indice(3)``.

Why a ladder: a hint that gives the code turns an exercise into a transcription. Each ladder
says first where to look (a lesson and its section), then what to do in words, and only at the
last level something close to the code, never the whole answer. A learner asks for the next
level when stuck; the number of hints used is shown to them and kept in their progress file
(``course.progress``).

For the TP, ``indice()`` follows the last ``verifier``: its first cause of failure chooses the
ladder (one cause, one ladder). For a lesson's exercise, ``indice(1, "requete_niveau")`` names
the function the exercise asks for.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "LADDERS",
    "LEVELS",
    "TP_CALL",
    "TP_START",
    "Ladder",
    "Place",
    "S_ASYNC",
    "current_tp_cause",
    "indice",
    "offer_hints",
    "set_tp_cause",
]

LEVELS = 3
TP_START = "tp:depart"
TP_CALL = "tp:appel"  # the call raised, ran out of time or took the file away


@dataclass(frozen=True)
class Place:
    """Where to look: a lesson's notebook and one of its section headings (as written)."""

    notebook: str  # in the lessons' folder
    section: str

    def text(self) -> str:
        number = self.notebook[:2]
        lesson = "la page de départ" if number == "00" else f"la leçon {int(number)}"
        return f"{lesson}, section «\u00a0{self.section}\u00a0»"


@dataclass(frozen=True)
class Ladder:
    """The hints of one exercise or one cause of failure, from the widest to the closest."""

    key: str
    step: str  # the progress session it is recorded in ("02", "tp")
    topic: str  # French: what it is about
    places: tuple[Place, ...]
    levels: tuple[str, str, str]

    def where(self) -> str:
        return " et ".join(p.text() for p in self.places)


L2 = "02_brancher_sqlite.ipynb"
L3 = "03_ce_que_contient_le_fichier.ipynb"
L4 = "04_effacer_un_eleve.ipynb"
L5 = "05_reprendre_apres_redemarrage.ipynb"
S_API = Place(L4, "1. Supprimer toutes les sessions par l'API")
S_FK = Place(L4, "2. Le piège de `foreign_keys`")
S_BYTES = Place(L4, "3. Ce qui reste lisible dans le fichier")
S_PARAMS = Place(L4, "4. Des requêtes paramétrées")
S_TRANSACTION = Place(L4, "5. Valider ou annuler une transaction")
S_GUARANTEE = Place(L4, "Ce que devra garantir `oublier`")
S_CLOSE = Place(L5, "Fermer les connexions")
S_SCOPES = Place(L3, "Une clé par portée")
S_ASYNC = Place("00_commencer_ici.ipynb", "`async def` et `await` en trois minutes")
S_TABLES = Place(L3, "Quatre tables")

_LADDERS = (
    Ladder(
        TP_START,
        "tp",
        "l'écriture d'oublier",
        (S_API, S_GUARANTEE),
        (
            "Commencez par ce que l'API du service sait effacer, puis regardez ce qu'elle "
            "laisse\u00a0: c'est tout l'objet de la leçon 4. Lancez ensuite "
            "verifier(oublier)\u00a0: les indices suivront sa première cause d'échec.",
            "Deux temps. Par l'API, les sessions de l'élève, une à une. Puis, en SQL sur le "
            "fichier du service (son chemin est service.db_path), ce que l'API ne touche pas, "
            "et enfin ce que le fichier garde encore de lui.",
            "Le squelette\u00a0: une boucle `for` sur les `.sessions` de "
            "`await service.list_sessions(...)`, qui appelle `await service.delete_session(...)` "
            "pour chacune\u00a0; puis une connexion `sqlite3.connect(...)` ouverte sur le chemin "
            "du service, vos requêtes, et sa fermeture dans un `finally`.",
        ),
    ),
    Ladder(
        "tp:sessions",
        "tp",
        "les sessions de l'élève (critère 1)",
        (S_API,),
        (
            "Des sessions de l'élève restent\u00a0: la section citée les supprime toutes, par "
            "l'API, et compte ce qui reste.",
            "list_sessions donne toutes les sessions d'un élève dans une application, "
            "delete_session en supprime une seule\u00a0: il faut les parcourir, pour le user_id "
            "reçu en paramètre (jamais un nom écrit en dur).",
            "`list_sessions(...)` reçoit `app_name=` l'application du cours et `user_id=` "
            "l'élève reçu\u00a0; sa réponse a un attribut `.sessions`\u00a0; pour chacune, "
            "`delete_session(...)` reçoit les deux mêmes valeurs et `session_id=` l'identifiant "
            "de cette session (son attribut `.id`).",
        ),
    ),
    Ladder(
        "tp:orphelins",
        "tp",
        "les événements orphelins (critère 2)",
        (S_FK,),
        (
            "Des événements restent sans leur session\u00a0: la section citée mesure quand la "
            "suppression en cascade a lieu, et quand elle n'a pas lieu.",
            "Avec sqlite3, la cascade qui emporte les événements d'une session supprimée n'agit "
            "que si la connexion l'a activée, à chaque nouvelle connexion\u00a0; sinon, supprimez "
            "vous-même les événements de l'élève.",
            "Juste après `sqlite3.connect(...)`, avant le premier DELETE\u00a0: un "
            "`conn.execute(...)` du PRAGMA que la section 2 de la leçon 4 exécute, mis à ON "
            "(il vaut pour cette connexion seulement).",
        ),
    ),
    Ladder(
        "tp:user_states",
        "tp",
        "la ligne user_states (critère 3)",
        (S_API, S_SCOPES),
        (
            "L'état user: survit à la suppression de toutes les sessions\u00a0: la leçon 4 le "
            "montre, la leçon 3 dit où il est rangé.",
            "Aucune méthode de l'API n'efface cette ligne\u00a0: une requête SQL sur sa table, "
            "limitée à cette application et à cet élève, puis validée (une suppression non "
            "validée est annulée quand la connexion se ferme).",
            "Un `conn.execute(...)` d'un DELETE sur user_states, dont le WHERE teste app_name "
            "et user_id avec deux `?`, les valeurs dans un tuple, le tout dans un bloc "
            "`with conn:`, qui valide en sortant.",
        ),
    ),
    Ladder(
        "tp:autres",
        "tp",
        "les autres élèves et applications (critère 4)",
        (S_TABLES, S_PARAMS),
        (
            "oublier a touché ce qui n'est pas à cet élève\u00a0: relisez ce qui identifie une "
            "ligne dans chaque table (leçon 3) et comment on la vise (leçon 4).",
            "Un même user_id peut exister dans une autre application, et app_states n'appartient "
            "à aucun élève\u00a0: chaque suppression vise l'application ET l'élève, et app_states "
            "reste tel quel.",
            "La forme de chaque requête\u00a0: `DELETE FROM <table> WHERE app_name = ? AND "
            "user_id = ?` avec `(APP_NAME, user_id)`\u00a0; aucune requête sur app_states.",
        ),
    ),
    Ladder(
        "tp:deux_fois",
        "tp",
        "un second appel, un élève inconnu (critère 5)",
        (S_GUARANTEE,),
        (
            "oublier doit pouvoir être rappelée, ou appelée pour un élève qui n'existe pas, sans "
            "erreur ni changement\u00a0: c'est une des garanties de la section citée.",
            "Une boucle sur une liste vide ne fait rien, un DELETE qui ne trouve aucune ligne "
            "non plus\u00a0; ce qui lève une erreur, c'est de supposer que l'élève existe (un "
            "premier élément, une session lue puis utilisée).",
            "Pas de `[0]` sur la liste des sessions ni de `.id` sur ce que renvoie "
            "get_session\u00a0: une boucle `for` et des `DELETE ... WHERE` ne lèvent rien sur "
            "un élève absent.",
        ),
    ),
    Ladder(
        "tp:guillemets",
        "tp",
        "un user_id avec apostrophes (critère 6)",
        (S_PARAMS,),
        (
            "Un user_id comme o'connor casse ou détourne votre requête\u00a0: la section citée "
            "le montre.",
            "La valeur ne doit jamais entrer dans le texte SQL\u00a0: le texte garde une place "
            "vide, et la valeur est passée à part, à sqlite3.",
            "Des `?` dans le texte SQL, autant que de valeurs, et les valeurs dans un tuple en "
            "second argument de `conn.execute(...)`, dans le même ordre\u00a0; jamais de "
            "f-string ni de `+` pour construire la requête.",
        ),
    ),
    Ladder(
        "tp:fichier",
        "tp",
        "ce que le fichier garde (critère 7)",
        (S_BYTES,),
        (
            "SQL ne voit plus l'élève, mais ses octets se lisent encore\u00a0: la section citée "
            "cherche un nom dans le fichier et dans son -wal, étape par étape.",
            "Deux endroits gardent le texte supprimé\u00a0: les pages libres du fichier et le "
            "-wal. Il faut une commande qui réécrit le fichier, puis une qui recopie le -wal "
            "dans la base et le vide, après la validation des suppressions.",
            "Après le `with conn:` qui valide, deux `conn.execute(...)`\u00a0: la commande "
            "qui réécrit le fichier (leçon 4, section 3, dernière étape), puis le PRAGMA du "
            "checkpoint en mode TRUNCATE\u00a0; et `conn.close()` à la fin.",
        ),
    ),
    Ladder(
        "tp:transaction",
        "tp",
        "une transaction jamais validée",
        (S_TRANSACTION, S_BYTES),
        (
            "Votre connexion s'arrête avec une transaction ouverte\u00a0: ce qu'elle a supprimé "
            "est annulé. Les essais 1 et 4 de la section 5 montrent ce qui arrive à une "
            "suppression jamais validée, puis à VACUUM.",
            "sqlite3 ouvre une transaction au premier DELETE\u00a0; elle ne compte qu'une fois "
            "validée, et la réécriture du fichier refuse de tourner à l'intérieur. L'ordre\u00a0: "
            "supprimer, valider, réécrire, fermer.",
            "Un bloc `with conn:` autour des DELETE (il valide en sortant), seulement ensuite "
            "la réécriture du fichier par un `conn.execute(...)`, et `conn.close()` dans un "
            "`finally`.",
        ),
    ),
    Ladder(
        TP_CALL,
        "tp",
        "un appel qui ne se termine pas normalement",
        (S_TRANSACTION, S_CLOSE),
        (
            "Votre appel ne s'est pas terminé normalement\u00a0: il a levé une erreur, dépassé "
            "la limite de temps ou fait disparaître le fichier. Le message de verifier dit "
            "lequel (la ligne «\u00a0Pour tout l'appel\u00a0» ou le critère 1).",
            "oublier efface des lignes dans le fichier du service, puis rend la main\u00a0: pas "
            "de boucle qui attend, pas de suppression du fichier lui-même, et une erreur levée "
            "arrête tout ce qui suit. Essayez vos étapes une à une, hors de oublier.",
            "Dans une cellule à part\u00a0: `chemin = base_exemple()`, "
            "`service = SqliteSessionService(chemin)`, puis chaque étape de votre oublier avec "
            "`await` et `\"alice\"`\u00a0: l'erreur s'affiche alors avec sa ligne.",
        ),
    ),
    Ladder(
        "tp:async",
        "tp",
        "une fonction asynchrone",
        (S_ASYNC,),
        (
            "Deux oublis se ressemblent\u00a0: oublier définie sans async def (le tuteur "
            "l'appelle avec await), ou une méthode du service appelée sans await (elle ne fait "
            "alors rien, sans erreur). Relisez la section citée.",
            "Le message de verifier dit lequel. Chaque appel au service, dans oublier, commence "
            "par await, même celui dont vous n'utilisez pas le résultat.",
            "Première ligne\u00a0: `async def oublier(service, user_id: str) -> None:`\u00a0; "
            "dedans, par exemple `await service.delete_session(...)`, jamais "
            "`service.delete_session(...)` seul.",
        ),
    ),
    Ladder(
        "derniere_session_complete",
        "02",
        "l'exercice derniere_session_complete",
        (Place(L2, "`list_sessions`, un index\u00a0; `get_session`, le rechargement complet"),),
        (
            "La section citée oppose deux méthodes\u00a0: l'une choisit, l'autre recharge.",
            "Deux appels\u00a0: list_sessions pour choisir la session la plus récemment modifiée "
            "(la liste est triée, et elle peut être vide), puis get_session pour la relire avec "
            "ses événements.",
            "`sessions = (await service.list_sessions(app_name=APP_NAME, user_id=user_id))"
            ".sessions`\u00a0; liste vide\u00a0: None\u00a0; sinon, get_session avec "
            "`session_id=sessions[-1].id`.",
        ),
    ),
    Ladder(
        "requete_niveau",
        "03",
        "l'exercice requete_niveau",
        (S_SCOPES, Place(L3, "Les événements, en JSON")),
        (
            "La progression d'un élève est rangée selon sa portée (première section citée)\u00a0; "
            "json_extract lit dans un JSON (seconde section).",
            "La colonne state de user_states contient la progression sans le préfixe user:\u00a0: "
            "progression, puis python, puis niveau. La requête lit ce chemin et filtre par "
            "application et par élève, avec deux points d'interrogation comme paramètres.",
            "Dans le SELECT\u00a0: `json_extract(state, '$.progression.python.niveau')`\u00a0; "
            "à la fin\u00a0: `WHERE app_name = ? AND user_id = ?`.",
        ),
    ),
    Ladder(
        "messages_de_l_eleve",
        "05",
        "l'exercice messages_de_l_eleve",
        (Place(L5, "Lire l'historique page par page"),),
        (
            "La section citée lit déjà une session par pages\u00a0: reprenez sa boucle.",
            "Une boucle\u00a0: list_events avec after et limit=taille, arrêtée sur une page "
            "vide\u00a0; after avance du nombre d'événements lus. Gardez les textes des "
            "événements dont l'auteur est \"user\" (certains n'ont pas de contenu).",
            "`page = await service.list_events(app_name=APP_NAME, user_id=user_id, "
            "session_id=session_id, after=apres, limit=taille)`\u00a0; pour un événement de "
            "l'élève\u00a0: `[p.text for p in evenement.content.parts if p.text]`.",
        ),
    ),
    Ladder(
        "supprimer_inactives",
        "05",
        "l'exercice supprimer_inactives",
        (Place(L5, "Une durée de conservation"),),
        (
            "La section citée dit ce que regarde la règle\u00a0: la dernière modification d'une "
            "session, pas sa création.",
            "list_sessions sans user_id liste les sessions de tous les élèves, chacune avec son "
            "user_id et son last_update_time\u00a0: comparez à une limite en secondes, supprimez, "
            "comptez. Refusez d'abord un nombre de jours négatif.",
            "`limite = time.time() - jours * 86400`\u00a0; pour chaque `s` de "
            "`(await service.list_sessions(app_name=APP_NAME)).sessions` dont "
            "`s.last_update_time < limite`\u00a0: `delete_session` avec `user_id=s.user_id`.",
        ),
    ),
)
_LADDERS += (
    Ladder(
        "oublier_conversation",
        "07",
        "l'exercice oublier_conversation",
        (
            Place("07_partager_la_memoire.ipynb", "2. Les tables qu'ADK crée sur PostgreSQL"),
            Place("07_partager_la_memoire.ipynb", "4. Ce que laisse `DELETE`"),
        ),
        (
            "Une conversation est une ligne de sessions\u00a0; la section 2 dit ce que deviennent "
            "ses événements quand elle part, la section 4 ce que DELETE laisse dans les fichiers "
            "des tables.",
            "Une seule suppression, qui désigne la session par ses trois colonnes (application, "
            "élève, identifiant), les valeurs passées à part\u00a0; la cascade fait le reste. "
            "Puis la commande de la section 4 qui réécrit les tables concernées.",
            '`await sql("DELETE FROM sessions WHERE app_name = $1 AND user_id = $2 AND id = $3", '
            "...)`, avec les trois valeurs dans cet ordre\u00a0; puis la réécriture mesurée en "
            "section 4, sur les deux tables qui portaient la conversation.",
        ),
    ),
)
_LADDERS += (
    Ladder(
        "oublier_partage",
        "07",
        "le second TP, oublier_partage",
        (
            Place("07_partager_la_memoire.ipynb", "2. Les tables qu'ADK crée sur PostgreSQL"),
            Place("07_partager_la_memoire.ipynb", "4. Ce que laisse `DELETE`"),
        ),
        (
            "Le TP reprend l'exercice de la leçon 7, pour tout l'élève cette fois\u00a0: la "
            "section 2 dit quelles tables portent ses données et ce que la cascade emporte, la "
            "section 4 ce que DELETE laisse dans les fichiers des tables.",
            "Deux suppressions, chacune limitée à l'application du cours ET à l'élève reçu, les "
            "valeurs passées à part\u00a0: ses sessions (leurs événements suivent, par la "
            "cascade), puis son état user:, qu'aucune session ne porte. Enfin, la commande de "
            "la section 4 qui réécrit les tables, pour que ses octets ne s'y lisent plus.",
            '`await sql("DELETE FROM sessions WHERE app_name = $1 AND user_id = $2", ...)`, '
            "avec les deux valeurs dans cet ordre\u00a0; la même forme pour la table de l'état "
            "user:\u00a0; puis la réécriture mesurée en section 4, sur les trois tables qui "
            "portaient l'élève.",
        ),
    ),
)
LADDERS: dict[str, Ladder] = {ladder.key: ladder for ladder in _LADDERS}

# the ladder indice() without a name climbs, in this kernel: the last verifier's first cause, or
# the ladder last named (a lesson's indice(1, "requete_niveau"), then indice(2)); None until one
_tp_cause: list[str | None] = [None]
# before any, the TP whose folder the notebook runs in (its assignment's name, on the hub too)
_BY_FOLDER = {"oublier": TP_START, "oublier_partage": "oublier_partage"}


def set_tp_cause(cause: str | None) -> None:
    """Called by ``verifier``: the ladder ``indice()`` climbs next (None: all criteria met)."""
    _tp_cause[0] = cause if cause in LADDERS else ("" if cause is None else TP_START)


def current_tp_cause() -> str | None:
    """The ladder ``indice()`` climbs ("" once every criterion holds); None in a lesson where
    nothing was checked nor named yet (a lesson's kernel gave the first TP's hints, counted
    against it)."""
    if _tp_cause[0] is None:
        return _BY_FOLDER.get(Path.cwd().name)
    return _tp_cause[0]


def offer_hints(cause: str | None) -> None:
    """After a TP's check: the ladder ``indice()`` climbs next (its first cause of failure, or
    the TP's own), and the line that offers it; None: every criterion holds, no hint."""
    set_tp_cause(cause)
    if current_tp_cause():
        topic = LADDERS[current_tp_cause()].topic
        print(f"\nBloqué sur {topic}\u00a0? indice(1), puis indice(2), puis indice(3).")


def _count(n: int) -> str:
    return f"{n} indice{'s' if n > 1 else ''}"


def indice(niveau: int | None = None, exercice: str | None = None) -> None:
    """Un indice, un niveau à la fois (1, 2 puis 3, le plus proche du code).

    Sans `exercice`, l'indice porte sur le dernier exercice nommé (``indice(1,
    "requete_niveau")``, puis ``indice(2)``) ou sur la dernière vérification manquée, et sinon
    sur la première cause d'échec du dernier ``verifier(oublier)``\u00a0; `exercice` est le nom
    de la fonction que l'exercice demande. Sans `niveau`, c'est le niveau suivant.
    """
    from . import progress

    key = exercice if exercice is not None else current_tp_cause()
    if exercice is None and key == "":
        print("Votre dernier verifier respecte tous les critères\u00a0: pas besoin d'indice.")
        return
    if key is None:
        names = ", ".join(f'"{k}"' for k in LADDERS if not k.startswith("tp:"))
        print(
            "Sur quel exercice\u00a0? Donnez son nom (celui de la fonction qu'il demande)\u00a0: "
            f'indice(1, "requete_niveau") par exemple. Exercices\u00a0: {names}.'
        )
        return
    # course.labo loads the grader's modules: imported here, not with the lessons' hints
    from .labo.learner_errors import MauvaisArgument

    ladder = LADDERS.get(key) if isinstance(key, str) else None
    if ladder is None:
        known = ", ".join(k for k in LADDERS if not k.startswith("tp:"))
        raise MauvaisArgument(f"Exercice inconnu\u00a0: {exercice!r} (connus\u00a0: {known}).")
    if exercice is not None:
        _tp_cause[0] = ladder.key  # indice(2) next climbs this one
    seen = {level for _k, level in progress.hints_used(ladder.key)}
    if niveau is None:
        niveau = min(max(seen, default=0) + 1, LEVELS)
    if isinstance(niveau, bool) or not isinstance(niveau, int) or not 1 <= niveau <= LEVELS:
        raise MauvaisArgument(f"Le niveau d'un indice va de 1 à {LEVELS} (reçu\u00a0: {niveau!r}).")
    if niveau not in seen:
        progress.record(ladder.step, "indice", echelle=ladder.key, niveau=niveau)
        seen.add(niveau)
    total = len(progress.hints_used())
    # printed as plain text, not Markdown: the backticks that mark code in the source go
    where = ladder.where().replace("`", "")
    print(f"Indice {niveau}/{LEVELS} — {ladder.topic}. Où regarder\u00a0: {where}.")
    print(ladder.levels[niveau - 1].replace("`", ""))
    following = (
        f"Encore bloqué\u00a0? indice({niveau + 1}{'' if exercice is None else f', {exercice!r}'})."
        if niveau < LEVELS
        else "C'est le dernier niveau\u00a0: le reste est à vous."
    )
    print(following)
    print(
        f"Indices utilisés\u00a0: {len(seen)}/{LEVELS} pour {ladder.topic}, {_count(total)} "
        "dans tout le cours."
    )
