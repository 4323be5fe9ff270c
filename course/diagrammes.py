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

__all__ = ["Diagramme", "DiagrammeError", "afficher", "schema", "sequence", "with_accessibility"]

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


def afficher(diagram: Diagramme) -> None:
    """Affiche un diagramme (JupyterLab le dessine hors ligne ; sinon, sa version texte)."""
    from IPython.display import display

    display(diagram.bundle(), raw=True)


def _collapse(text: object) -> str:
    """Runs of ordinary whitespace become one space; non-breaking spaces (French typography)
    stay, which ``str.split()`` would not keep."""
    return re.sub(r"[ \t\r\n\f\v]+", " ", str(text)).strip(" ")


def _one_line(text: str, limit: int | None = None) -> str:
    """One safe line of Mermaid label text (no statement separators, comments or entities)."""
    text = _collapse(text)
    for before, after in (
        (";", ","),
        ("#", "n°"),
        ("%%", "%"),
        ("<", "‹"),
        (">", "›"),
        ('"', "'"),
        ("{", "("),
        ("}", ")"),
    ):
        text = text.replace(before, after)
    if limit is not None and len(text) > limit:
        text = text[: limit - 1].rstrip() + "…"
    return text


def _shorten(text: str, limit: int) -> str:
    """Plain text on one line, cut to ``limit`` characters (for labels and the text fallback)."""
    text = _collapse(text)
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


# Mermaid entity codes: the learner's own characters survive (an answer « # » stays « # »)
# without ending a statement (;), starting a comment (%%) or opening a tag or a shape.
_ENTITIES = {
    "#": "#35;",
    ";": "#59;",
    "%": "#37;",
    "<": "#lt;",
    ">": "#gt;",
    '"': "#quot;",
    "{": "#123;",
    "}": "#125;",
}


def _label(text: str) -> str:
    """A message or note label for a sequence diagram, characters kept as entity codes."""
    return "".join(_ENTITIES.get(c, c) for c in text)


def _ident(name: str) -> str:
    ident = re.sub(r"[^A-Za-z0-9_]", "_", name)
    return ident if ident and not ident[0].isdigit() else f"t_{ident}"


def with_accessibility(source: str, title: str, description: str) -> str:
    """Insert ``accTitle``/``accDescr`` right after the diagram keyword line."""
    lines = source.split("\n")
    start = 0
    if lines and lines[0].strip() == "---":  # skip a front-matter block
        start = next(i for i in range(1, len(lines)) if lines[i].strip() == "---") + 1
    for i in range(start, len(lines)):
        if lines[i].strip() and not lines[i].strip().startswith("%%"):
            lines[i + 1 : i + 1] = [
                f"\taccTitle: {_one_line(title)}",
                f"\taccDescr: {_one_line(description)}",
            ]
            return "\n".join(lines)
    raise DiagrammeError("Texte Mermaid sans type de diagramme.")


def _open(db_path: str | Path, *, tables: bool) -> sqlite3.Connection:
    """``dbfile.connect_readonly`` (nothing beside the file is created), with DiagrammeError."""
    try:
        return dbfile.connect_readonly(db_path, tables=tables)
    except dbfile.DbFileError as exc:
        raise DiagrammeError(str(exc)) from None


def _sql_type(declared: str) -> str:
    return re.sub(r"[^A-Za-z0-9_]", "_", declared.strip()) or "ANY"


def schema(db_path: str | Path) -> Diagramme:
    """Le schéma du fichier : ses tables, leurs clés primaires et étrangères, les cascades.

    Deux tables qui partagent une partie de leur clé sans clé étrangère entre elles
    (``user_states`` et ``sessions``) sont reliées en pointillés : supprimer dans l'une ne
    supprime rien dans l'autre, ce qui est tout l'enjeu du TP « oublier ».
    """
    from mermaid.erdiagram import Entity, ERDiagram, Link

    conn = _open(db_path, tables=False)
    try:
        table_names = [
            r[0]
            for r in conn.execute(
                "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%' "
                "ORDER BY rowid"
            )
        ]
        if not table_names:
            raise DiagrammeError(f"{db_path} ne contient aucune table.")
        columns = {n: conn.execute(f'PRAGMA table_info("{n}")').fetchall() for n in table_names}
        foreign_keys = {
            n: conn.execute(f'PRAGMA foreign_key_list("{n}")').fetchall() for n in table_names
        }
    finally:
        conn.close()

    pk = {n: [c[1] for c in sorted(columns[n], key=lambda c: c[5]) if c[5]] for n in table_names}
    fk_cols = {n: {f[3]: f"{f[2]}.{f[4]}" for f in foreign_keys[n]} for n in table_names}
    entities: dict[str, Entity] = {}
    for n in table_names:
        attributes: dict[str, Any] = {}
        for _cid, col, declared, _notnull, _default, pk_rank in columns[n]:
            keys = [k for k, flag in (("PK", pk_rank), ("FK", col in fk_cols[n])) if flag]
            definition = [_sql_type(declared)]
            if keys:
                definition.append(", ".join(keys))
            if "FK" in keys:  # mermaid-py quotes a 2-item "PK, FK": give it a comment too
                definition.append(_one_line(f"vers {fk_cols[n][col]}"))
            attributes[_ident(col)] = definition
        entities[n] = Entity(_ident(n), attributes)

    links: list[Link] = []
    link_lines: list[str] = []
    for child in table_names:
        by_id: dict[int, list] = {}
        for f in foreign_keys[child]:
            by_id.setdefault(f[0], []).append(f)
        for group in by_id.values():
            parent, on_delete = group[0][2], (group[0][6] or "").upper()
            if parent not in entities:
                continue
            cols = ", ".join(f[3] for f in group)
            cascade = on_delete == "CASCADE"
            label = "ON DELETE CASCADE" if cascade else "clé étrangère"
            links.append(
                Link(entities[parent], entities[child], "exactly-one", "zero-or-more", label)
            )
            link_lines.append(
                f"- {parent} → {child} : clé étrangère ({cols})"
                + (
                    ", ON DELETE CASCADE : supprimer la ligne parente supprime les lignes liées"
                    if cascade
                    else ""
                )
            )
    for child in table_names:
        if foreign_keys[child] or not pk[child]:
            continue
        parents = [p for p in table_names if p != child and pk[p] and set(pk[p]) < set(pk[child])]
        if not parents:
            continue
        parent = max(parents, key=lambda p: len(pk[p]))
        shared_key = ", ".join(pk[parent])
        links.append(
            Link(
                entities[parent],
                entities[child],
                "zero-or-one",
                "zero-or-more",
                "même clé, sans cascade",
                dotted=True,
            )
        )
        link_lines.append(
            f"- {parent} ⇢ {child} : même ({shared_key}) mais aucune clé étrangère, donc aucune "
            "suppression en cascade entre elles"
        )

    file_name = Path(db_path).name
    title = f"Schéma de {file_name}"
    description = (
        f"Les {len(table_names)} tables de {file_name} ({', '.join(table_names)}), leurs clés "
        "primaires et étrangères, et les liens avec ou sans suppression en cascade."
    )
    source = with_accessibility(
        ERDiagram(_one_line(title).replace(":", " "), list(entities.values()), links).script,
        title,
        description,
    )
    lines = [f"{title} ({len(table_names)} tables)"]
    for n in table_names:
        cols = ", ".join(c[1] + (" (PK)" if c[5] else "") for c in columns[n])
        lines.append(f"- {n} : {cols}")
    if link_lines:
        lines += ["Liens :", *link_lines]
    return Diagramme(title, description, source, "\n".join(lines))


def _summary(value: Any, limit: int = 40) -> str:
    """Short label for tool arguments or results: ``k=v, k=v`` rather than JSON braces."""
    if isinstance(value, dict):
        value = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in value.items())
    elif isinstance(value, list):
        value = json.dumps(value, ensure_ascii=False)
    return _shorten(str(value), limit)


def sequence(
    db_path: str | Path,
    session_id: str | None = None,
    *,
    app_name: str = app.APP_NAME,
    user_id: str | None = None,
    limite: int = 40,
) -> Diagramme:
    """Les événements d'une session en diagramme de séquence : l'élève, le tuteur, ses outils.

    Sans ``session_id``, prend la session qui a le plus d'événements (de ``user_id`` s'il est
    donné) ; ``limite`` borne le nombre d'événements dessinés.
    """
    from mermaid.sequence import Actor, Note, Participant, SequenceDiagram
    from mermaid.sequence import Link as Arrow

    if not isinstance(limite, int) or limite < 1:
        raise DiagrammeError(f"`limite` doit être un entier ≥ 1 (reçu : {limite!r}).")
    conn = _open(db_path, tables=True)
    try:
        try:
            if session_id is None:
                query = (
                    "SELECT s.user_id, s.id FROM sessions s LEFT JOIN events e ON "
                    "e.app_name=s.app_name AND e.user_id=s.user_id AND e.session_id=s.id "
                    "WHERE s.app_name=?"
                )
                params: list[Any] = [app_name]
                if user_id is not None:
                    query += " AND s.user_id=?"
                    params.append(user_id)
                query += (
                    " GROUP BY s.app_name, s.user_id, s.id "
                    "ORDER BY count(e.id) DESC, s.create_time, s.id LIMIT 1"
                )
                found = conn.execute(query, params).fetchone()
            else:
                query = "SELECT user_id, id FROM sessions WHERE app_name=? AND id=?"
                params = [app_name, session_id]
                if user_id is not None:
                    query += " AND user_id=?"
                    params.append(user_id)
                found = conn.execute(query, params).fetchone()
            if found is None:
                whose = f" pour {user_id}" if user_id is not None else ""
                raise DiagrammeError(
                    f"Aucune session{whose} dans l'application {app_name!r}"
                    + (f" avec l'id {session_id!r}." if session_id else ".")
                )
            user, sid = found
            event_rows = conn.execute(
                "SELECT event_data FROM events WHERE app_name=? AND user_id=? AND session_id=? "
                "ORDER BY timestamp, rowid",
                (app_name, user, sid),
            ).fetchall()
        except sqlite3.OperationalError as exc:
            raise DiagrammeError(
                f"{db_path} n'a pas le format d'une base de sessions : {exc}"
            ) from exc
    finally:
        conn.close()

    learner = Actor("eleve")
    learner.name = "eleve as Élève"  # mermaid-py's Actor has no alias: id eleve, label Élève
    tutor = Participant("Tuteur")
    tools: dict[str, Participant] = {}
    arrows: list[Any] = []
    text_lines = [f"Session {sid} de {user} ({len(event_rows)} événements) :"]

    def tool(name: str) -> Participant:
        if name not in tools:
            p = Participant(f"outil {_ident(name)}")
            tools[name] = p
        return tools[name]

    for (stored,) in event_rows[:limite]:
        try:
            event = json.loads(stored)
        except json.JSONDecodeError:
            arrows.append(Note("événement illisible", tutor))
            text_lines.append("- événement illisible")
            continue
        author = event.get("author", "?")
        parts = ((event.get("content") or {}).get("parts")) or []
        for part in parts:
            if part.get("function_call"):
                call = part["function_call"]
                name = str(call.get("name", "?"))
                message = f"{name}({_summary(call.get('args', {}))})"
                message = _shorten(message, 60)
                arrows.append(Arrow(tutor, tool(name), "Solid-arrow", _label(message)))
                text_lines.append(f"- le tuteur appelle l'outil {message}")
            elif part.get("function_response"):
                response = part["function_response"]
                name = str(response.get("name", "?"))
                message = _summary(response.get("response", {}), 50)
                arrows.append(Arrow(tool(name), tutor, "Dotted-arrow", _label(message)))
                text_lines.append(f"- l'outil {name} répond {message}")
            elif part.get("text"):
                message = _shorten(part["text"], 60)
                if author == "user":
                    arrows.append(Arrow(learner, tutor, "Solid-arrow", _label(message)))
                    text_lines.append(f"- l'élève écrit : {message}")
                else:
                    arrows.append(Arrow(tutor, learner, "Dotted-arrow", _label(message)))
                    text_lines.append(f"- le tuteur répond : {message}")
        delta = ((event.get("actions") or {}).get("state_delta")) or {}
        if delta:
            keys = ", ".join(sorted(delta))
            arrows.append(Note(_label(_shorten(f"état modifié : {keys}", 60)), tutor))
            text_lines.append(f"  (état modifié : {keys})")
    if len(event_rows) > limite:
        rest = len(event_rows) - limite
        arrows.append(Note(f"… et {rest} événements de plus", tutor))
        text_lines.append(f"… et {rest} événements de plus")
    if not event_rows:
        arrows.append(Note("session vide : aucun événement", tutor))

    title = f"Une session de l'élève {user}"
    description = (
        f"Les {min(len(event_rows), limite)} premiers événements de la session {sid} dans "
        "l'ordre du temps, messages de l'élève, appels d'outils et réponses du tuteur."
    )
    diagram = SequenceDiagram(
        _one_line(title).replace(":", " "), [learner, tutor, *tools.values(), *arrows]
    )
    source = with_accessibility(diagram.script, title, description)
    return Diagramme(title, description, source, "\n".join(text_lines))
