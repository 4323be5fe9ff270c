"""Diagrammes Mermaid construits à partir de la base SQLite de l'élève.

Why here: the lessons show the learner's *own* file, not a picture of someone else's. The
Mermaid text is built with mermaid-py's pure classes (``mermaid.erdiagram``,
``mermaid.sequence``), never with ``mermaid.Mermaid(...)``, which sends the diagram to a web
service. JupyterLab (4.1+) renders the ``text/vnd.mermaid`` MIME type offline; the
``text/plain`` fallback says the same thing in words for a static export or a screen reader.
Every diagram carries Mermaid's ``accTitle`` and ``accDescr`` (mermaid-py 0.9 has no API for
them, so they are inserted after the diagram keyword).
"""

from __future__ import annotations

import json
import re
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import app, dbfile

if TYPE_CHECKING:  # mermaid-py is imported on use: its package imports requests, which probes
    from mermaid.erdiagram import Entity, Link  # sockets at import time
    from mermaid.sequence import Participant

__all__ = ["Diagramme", "DiagrammeError", "afficher", "avec_accessibilite", "schema", "sequence"]

MIME = "text/vnd.mermaid"


class DiagrammeError(ValueError):
    """Base illisible ou session introuvable (message en français pour l'élève)."""


@dataclass(frozen=True)
class Diagramme:
    """Un diagramme Mermaid, avec son titre, sa description (pour les lecteurs d'écran) et sa
    version en texte (pour un export statique)."""

    titre: str
    description: str
    source: str
    texte: str

    def bundle(self) -> dict[str, str]:
        return {MIME: self.source, "text/plain": self.texte}

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        return self.bundle()

    def __str__(self) -> str:
        return self.source


def afficher(diagramme: Diagramme) -> None:
    """Affiche un diagramme (JupyterLab le dessine hors ligne ; sinon, sa version texte)."""
    from IPython.display import display

    display(diagramme.bundle(), raw=True)


def _ligne(texte: str, limite: int | None = None) -> str:
    """One safe line of Mermaid label text (no statement separators, comments or entities)."""
    texte = " ".join(str(texte).split())
    for avant, apres in (
        (";", ","),
        ("#", "n°"),
        ("%%", "%"),
        ("<", "‹"),
        (">", "›"),
        ('"', "'"),
        ("{", "("),
        ("}", ")"),
    ):
        texte = texte.replace(avant, apres)
    if limite is not None and len(texte) > limite:
        texte = texte[: limite - 1].rstrip() + "…"
    return texte


def _court(texte: str, limite: int) -> str:
    """Plain text on one line, cut to ``limite`` characters (for labels and the text fallback)."""
    texte = " ".join(str(texte).split())
    return texte if len(texte) <= limite else texte[: limite - 1].rstrip() + "…"


# Mermaid entity codes: the learner's own characters survive (an answer « # » stays « # »)
# without ending a statement (;), starting a comment (%%) or opening a tag or a shape.
_ENTITES = {
    "#": "#35;",
    ";": "#59;",
    "%": "#37;",
    "<": "#lt;",
    ">": "#gt;",
    '"': "#quot;",
    "{": "#123;",
    "}": "#125;",
}


def _etiquette(texte: str) -> str:
    """A message or note label for a sequence diagram, characters kept as entity codes."""
    return "".join(_ENTITES.get(c, c) for c in texte)


def _ident(nom: str) -> str:
    ident = re.sub(r"[^A-Za-z0-9_]", "_", nom)
    return ident if ident and not ident[0].isdigit() else f"t_{ident}"


def avec_accessibilite(source: str, titre: str, description: str) -> str:
    """Insert ``accTitle``/``accDescr`` right after the diagram keyword line."""
    lignes = source.split("\n")
    debut = 0
    if lignes and lignes[0].strip() == "---":  # skip a front-matter block
        debut = next(i for i in range(1, len(lignes)) if lignes[i].strip() == "---") + 1
    for i in range(debut, len(lignes)):
        if lignes[i].strip() and not lignes[i].strip().startswith("%%"):
            lignes[i + 1 : i + 1] = [
                f"\taccTitle: {_ligne(titre)}",
                f"\taccDescr: {_ligne(description)}",
            ]
            return "\n".join(lignes)
    raise DiagrammeError("Texte Mermaid sans type de diagramme.")


def _open(db_path: str | Path, *, tables: bool) -> sqlite3.Connection:
    """``dbfile.connect_readonly`` (nothing beside the file is created), with DiagrammeError."""
    try:
        return dbfile.connect_readonly(db_path, tables=tables)
    except dbfile.DbFileError as exc:
        raise DiagrammeError(str(exc)) from None


def _type(declare: str) -> str:
    return re.sub(r"[^A-Za-z0-9_]", "_", declare.strip()) or "ANY"


def schema(db_path: str | Path) -> Diagramme:
    """Le schéma du fichier : ses tables, leurs clés primaires et étrangères, les cascades.

    Deux tables qui partagent une partie de leur clé sans clé étrangère entre elles
    (``user_states`` et ``sessions``) sont reliées en pointillés : supprimer dans l'une ne
    supprime rien dans l'autre, ce qui est tout l'enjeu du lab « oublier ».
    """
    from mermaid.erdiagram import Entity, ERDiagram, Link

    conn = _open(db_path, tables=False)
    try:
        noms = [
            r[0]
            for r in conn.execute(
                "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%' "
                "ORDER BY rowid"
            )
        ]
        if not noms:
            raise DiagrammeError(f"{db_path} ne contient aucune table.")
        colonnes = {n: conn.execute(f'PRAGMA table_info("{n}")').fetchall() for n in noms}
        cles_etr = {n: conn.execute(f'PRAGMA foreign_key_list("{n}")').fetchall() for n in noms}
    finally:
        conn.close()

    pk = {n: [c[1] for c in sorted(colonnes[n], key=lambda c: c[5]) if c[5]] for n in noms}
    fk_cols = {n: {f[3]: f"{f[2]}.{f[4]}" for f in cles_etr[n]} for n in noms}
    entites: dict[str, Entity] = {}
    for n in noms:
        attributs: dict[str, Any] = {}
        for _cid, col, declare, _notnull, _defaut, rang in colonnes[n]:
            cles = [k for k, oui in (("PK", rang), ("FK", col in fk_cols[n])) if oui]
            definition = [_type(declare)]
            if cles:
                definition.append(", ".join(cles))
            if "FK" in cles:  # mermaid-py quotes a 2-item "PK, FK": give it a comment too
                definition.append(_ligne(f"vers {fk_cols[n][col]}"))
            attributs[_ident(col)] = definition
        entites[n] = Entity(_ident(n), attributs)

    liens: list[Link] = []
    texte_liens: list[str] = []
    for enfant in noms:
        par_id: dict[int, list] = {}
        for f in cles_etr[enfant]:
            par_id.setdefault(f[0], []).append(f)
        for groupe in par_id.values():
            parent, on_delete = groupe[0][2], (groupe[0][6] or "").upper()
            if parent not in entites:
                continue
            cols = ", ".join(f[3] for f in groupe)
            cascade = on_delete == "CASCADE"
            label = "ON DELETE CASCADE" if cascade else "clé étrangère"
            liens.append(
                Link(entites[parent], entites[enfant], "exactly-one", "zero-or-more", label)
            )
            texte_liens.append(
                f"- {parent} → {enfant} : clé étrangère ({cols})"
                + (
                    ", ON DELETE CASCADE : supprimer la ligne parente supprime les lignes liées"
                    if cascade
                    else ""
                )
            )
    for enfant in noms:
        if cles_etr[enfant] or not pk[enfant]:
            continue
        parents = [p for p in noms if p != enfant and pk[p] and set(pk[p]) < set(pk[enfant])]
        if not parents:
            continue
        parent = max(parents, key=lambda p: len(pk[p]))
        cle = ", ".join(pk[parent])
        liens.append(
            Link(
                entites[parent],
                entites[enfant],
                "zero-or-one",
                "zero-or-more",
                "même clé, sans cascade",
                dotted=True,
            )
        )
        texte_liens.append(
            f"- {parent} ⇢ {enfant} : même ({cle}) mais aucune clé étrangère, donc aucune "
            "suppression en cascade entre elles"
        )

    nom_fichier = Path(db_path).name
    titre = f"Schéma de {nom_fichier}"
    description = (
        f"Les {len(noms)} tables de {nom_fichier} ({', '.join(noms)}), leurs clés primaires et "
        "étrangères, et les liens avec ou sans suppression en cascade."
    )
    source = avec_accessibilite(
        ERDiagram(_ligne(titre).replace(":", " "), list(entites.values()), liens).script,
        titre,
        description,
    )
    lignes = [f"{titre} ({len(noms)} tables)"]
    for n in noms:
        cols = ", ".join(c[1] + (" (PK)" if c[5] else "") for c in colonnes[n])
        lignes.append(f"- {n} : {cols}")
    if texte_liens:
        lignes += ["Liens :", *texte_liens]
    return Diagramme(titre, description, source, "\n".join(lignes))


def _resume(valeur: Any, limite: int = 40) -> str:
    """Short label for tool arguments or results: ``k=v, k=v`` rather than JSON braces."""
    if isinstance(valeur, dict):
        valeur = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in valeur.items())
    elif isinstance(valeur, list):
        valeur = json.dumps(valeur, ensure_ascii=False)
    return _court(str(valeur), limite)


def sequence(
    db_path: str | Path,
    session_id: str | None = None,
    *,
    app_name: str = app.APP_NAME,
    user_id: str | None = None,
    limite: int = 40,
) -> Diagramme:
    """Les événements d'une session en diagramme de séquence : l'élève, le tuteur, ses outils.

    Sans ``session_id``, prend la session qui a le plus d'événements (de ``user_id`` s'il est
    donné) ; ``limite`` borne le nombre d'événements dessinés.
    """
    from mermaid.sequence import Actor, Note, Participant, SequenceDiagram
    from mermaid.sequence import Link as Fleche

    if not isinstance(limite, int) or limite < 1:
        raise DiagrammeError(f"`limite` doit être un entier ≥ 1 (reçu : {limite!r}).")
    conn = _open(db_path, tables=True)
    try:
        try:
            if session_id is None:
                requete = (
                    "SELECT s.user_id, s.id FROM sessions s LEFT JOIN events e ON "
                    "e.app_name=s.app_name AND e.user_id=s.user_id AND e.session_id=s.id "
                    "WHERE s.app_name=?"
                )
                params: list[Any] = [app_name]
                if user_id is not None:
                    requete += " AND s.user_id=?"
                    params.append(user_id)
                requete += (
                    " GROUP BY s.app_name, s.user_id, s.id "
                    "ORDER BY count(e.id) DESC, s.create_time, s.id LIMIT 1"
                )
                trouve = conn.execute(requete, params).fetchone()
            else:
                requete = "SELECT user_id, id FROM sessions WHERE app_name=? AND id=?"
                params = [app_name, session_id]
                if user_id is not None:
                    requete += " AND user_id=?"
                    params.append(user_id)
                trouve = conn.execute(requete, params).fetchone()
            if trouve is None:
                qui = f" pour {user_id}" if user_id is not None else ""
                raise DiagrammeError(
                    f"Aucune session{qui} dans l'application {app_name!r}"
                    + (f" avec l'id {session_id!r}." if session_id else ".")
                )
            user, sid = trouve
            lignes_ev = conn.execute(
                "SELECT event_data FROM events WHERE app_name=? AND user_id=? AND session_id=? "
                "ORDER BY timestamp, rowid",
                (app_name, user, sid),
            ).fetchall()
        except sqlite3.OperationalError as exc:
            raise DiagrammeError(
                f"{db_path} n'a pas le format d'une base de sessions : {exc}"
            ) from exc
    finally:
        conn.close()

    eleve = Actor("eleve")
    eleve.name = "eleve as Élève"  # mermaid-py's Actor has no alias: id eleve, label Élève
    tuteur = Participant("Tuteur")
    outils: dict[str, Participant] = {}
    fleches: list[Any] = []
    texte = [f"Session {sid} de {user} ({len(lignes_ev)} événements) :"]

    def outil(nom: str) -> Participant:
        if nom not in outils:
            p = Participant(f"outil {_ident(nom)}")
            outils[nom] = p
        return outils[nom]

    for (brut,) in lignes_ev[:limite]:
        try:
            ev = json.loads(brut)
        except json.JSONDecodeError:
            fleches.append(Note("événement illisible", tuteur))
            texte.append("- événement illisible")
            continue
        auteur = ev.get("author", "?")
        parts = ((ev.get("content") or {}).get("parts")) or []
        for part in parts:
            if part.get("function_call"):
                appel = part["function_call"]
                nom = str(appel.get("name", "?"))
                message = f"{nom}({_resume(appel.get('args', {}))})"
                message = _court(message, 60)
                fleches.append(Fleche(tuteur, outil(nom), "Solid-arrow", _etiquette(message)))
                texte.append(f"- le tuteur appelle l'outil {message}")
            elif part.get("function_response"):
                rep = part["function_response"]
                nom = str(rep.get("name", "?"))
                message = _resume(rep.get("response", {}), 50)
                fleches.append(Fleche(outil(nom), tuteur, "Dotted-arrow", _etiquette(message)))
                texte.append(f"- l'outil {nom} répond {message}")
            elif part.get("text"):
                message = _court(part["text"], 60)
                if auteur == "user":
                    fleches.append(Fleche(eleve, tuteur, "Solid-arrow", _etiquette(message)))
                    texte.append(f"- l'élève écrit : {message}")
                else:
                    fleches.append(Fleche(tuteur, eleve, "Dotted-arrow", _etiquette(message)))
                    texte.append(f"- le tuteur répond : {message}")
        delta = ((ev.get("actions") or {}).get("state_delta")) or {}
        if delta:
            cles = ", ".join(sorted(delta))
            fleches.append(Note(_etiquette(_court(f"état modifié : {cles}", 60)), tuteur))
            texte.append(f"  (état modifié : {cles})")
    if len(lignes_ev) > limite:
        reste = len(lignes_ev) - limite
        fleches.append(Note(f"… et {reste} événements de plus", tuteur))
        texte.append(f"… et {reste} événements de plus")
    if not lignes_ev:
        fleches.append(Note("session vide : aucun événement", tuteur))

    titre = f"Une session de l'élève {user}"
    description = (
        f"Les {min(len(lignes_ev), limite)} premiers événements de la session {sid} dans "
        "l'ordre du temps, messages de l'élève, appels d'outils et réponses du tuteur."
    )
    diagramme = SequenceDiagram(
        _ligne(titre).replace(":", " "), [eleve, tuteur, *outils.values(), *fleches]
    )
    source = avec_accessibilite(diagramme.script, titre, description)
    return Diagramme(titre, description, source, "\n".join(texte))
