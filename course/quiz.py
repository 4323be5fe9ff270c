"""Quiz à correction immédiate pour les leçons du cours.

Why one class: a question is written once (``Quiz(question, options=[Option(...)])``) and the same
object gives the live widget (buttons, feedback after each click) and a static fallback
(``text/html`` and ``text/plain`` in the same display bundle), so a static HTML export or an
untrusted notebook still shows the question and its options. A saved notebook keeps only that
fallback (``course.save_hook``): the widget's model dies with the kernel.

Option order: authors write the right answer wherever they like; the learner sees the options
in an order shuffled deterministically from the quiz's key (its ``ident`` if given, else its
question), the same in the widget and in the static fallback, so the right answer's position
tells nothing and a re-run shows the same order. ``options``, ``repondre`` and ``retour`` keep
the author's numbering; ``ordre`` maps the displayed position to it.

DOM contract (used by the browser tests): the quiz container has CSS class ``quiz``; each option
button has ``quiz-option`` and the right one also ``quiz-correct`` (the clicked one gets
``quiz-choisie``); the feedback area has ``quiz-feedback`` and, once an option is clicked, shows
(visible text) "Bonne réponse" or "Pas tout à fait" followed by that option's explanation, inside
a polite ``aria-live`` region (``role="status"``) that stays the same element across clicks, so
that screen readers announce each new feedback. Colours come from JupyterLab's theme variables.
"""

from __future__ import annotations

import hashlib
import html
import random
import weakref
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "BILAN_ENREGISTRE",
    "BILAN_METADATA_KEY",
    "BONNE",
    "PAS_TOUT_A_FAIT",
    "Bilan",
    "Option",
    "Quiz",
    "QuizError",
    "bilan",
    "ordre_affiche",
    "quiz_du_carnet",
    "reinitialiser",
]

BONNE = "Bonne réponse"
PAS_TOUT_A_FAIT = "Pas tout à fait"
METADATA_KEY = "course/quiz"
BILAN_METADATA_KEY = "course/bilan"
# What a saved notebook shows in place of the score (see course.save_hook): the answers live
# in the kernel only, so a score saved with the file would be stale once it is reopened.
BILAN_ENREGISTRE = (
    "Bilan\u00a0: les réponses aux quiz ne sont pas enregistrées avec le notebook. Exécutez "
    "les cellules de quiz, répondez, puis exécutez cette cellule pour voir votre score."
)
LETTRES = "ABCDEFGHIJ"
_SYMBOLE = {"juste": "✓", "faux": "✗"}
# The live quiz's look, from JupyterLab's theme variables (fallbacks: the light theme's values),
# so that it reads in the light and the dark theme alike: the verdict takes the theme's success
# or error colour (shade 0 on a light background, shade 2 on a dark one: both at least 4.5:1 on
# the notebook's background), the explanation the theme's text colour, the chosen option a
# coloured inner border. Only the feedback chosen by the quiz box's ``quiz-choix-N`` class shows.
_STYLE = (
    "<style>"
    ".quiz-feedback .quiz-retour{display:none;margin:.4em 0;padding:.2em .7em;"
    "border-left:4px solid var(--jp-border-color1,#bdbdbd);"
    "color:var(--jp-content-font-color1,rgba(0,0,0,.87))}"
    ".quiz-feedback .quiz-retour-juste{border-left-color:var(--jp-success-color1,#388e3c)}"
    ".quiz-feedback .quiz-retour-faux{border-left-color:var(--jp-error-color1,#d32f2f)}"
    ".quiz-feedback .quiz-retour-juste .quiz-verdict{color:var(--jp-success-color0,#1b5e20)}"
    ".quiz-feedback .quiz-retour-faux .quiz-verdict{color:var(--jp-error-color0,#b71c1c)}"
    "[data-jp-theme-light=false] .quiz-feedback .quiz-retour-juste .quiz-verdict"
    "{color:var(--jp-success-color2,#81c784)}"
    "[data-jp-theme-light=false] .quiz-feedback .quiz-retour-faux .quiz-verdict"
    "{color:var(--jp-error-color2,#e57373)}"
    + "".join(
        f".quiz.quiz-choix-{i} .quiz-feedback .quiz-retour[data-option='{i}']{{display:block}}"
        for i in range(len(LETTRES))
    )
    + ".quiz-option.quiz-choisie-juste{box-shadow:inset 0 0 0 2px var(--jp-success-color1,#388e3c)}"
    ".quiz-option.quiz-choisie-faux{box-shadow:inset 0 0 0 2px var(--jp-error-color1,#d32f2f)}"
    "</style>"
)


class QuizError(ValueError):
    """Quiz mal défini (message en français : c'est l'auteur ou l'élève qui le lit)."""


def _echapper(texte: str) -> str:
    """Escape text content (quotes stay readable: they are not inside an attribute)."""
    return html.escape(texte, quote=False)


def _texte_non_vide(valeur: object, nom: str) -> str:
    if not isinstance(valeur, str) or not valeur.strip():
        raise QuizError(f"{nom} doit être un texte non vide (reçu\u00a0: {valeur!r}).")
    return valeur.strip()


@dataclass(frozen=True)
class Option:
    """Une réponse proposée : son texte, si elle est juste, et pourquoi."""

    texte: str
    juste: bool
    explication: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "texte", _texte_non_vide(self.texte, "Le texte d'une option"))
        object.__setattr__(
            self, "explication", _texte_non_vide(self.explication, "L'explication d'une option")
        )
        if not isinstance(self.juste, bool):
            raise QuizError(f"`juste` doit valoir True ou False (reçu\u00a0: {self.juste!r}).")


def ordre_affiche(cle: str, n: int) -> tuple[int, ...]:
    """A permutation of ``range(n)`` drawn from ``cle``: the same key always gives the same order.

    Why: written by hand, the right answer drifts to the first place; shuffling once per quiz
    (not per run) keeps the order stable for a class, a screenshot and a saved notebook.
    """
    graine = int.from_bytes(hashlib.sha256(cle.encode("utf-8")).digest(), "big")
    ordre = list(range(n))
    random.Random(graine).shuffle(ordre)
    return tuple(ordre)


# Quizzes defined in this kernel (one kernel = one notebook), in definition order.
# Keyed by id so that re-running a cell replaces its quiz instead of counting it twice.
_CARNET: dict[str, Quiz] = {}
_BILANS: weakref.WeakSet[Bilan] = weakref.WeakSet()


class Quiz:
    """Une question à choix multiple, avec une explication pour chaque option.

    ``objectif`` : numéro (à partir de 1) de l'objectif de la leçon que la question travaille ;
    ``revoir`` : ce que l'élève doit relire si sa première réponse était fausse.
    """

    def __init__(
        self,
        question: str,
        options: Sequence[Option],
        *,
        objectif: int | None = None,
        revoir: str | None = None,
        ident: str | None = None,
    ) -> None:
        self.question = _texte_non_vide(question, "La question")
        options = list(options) if not isinstance(options, str) else []
        if len(options) < 2 or len(options) > len(LETTRES):
            raise QuizError(
                f"Un quiz propose entre 2 et {len(LETTRES)} options (reçu\u00a0: {len(options)})."
            )
        for option in options:
            if not isinstance(option, Option):
                raise QuizError(f"Chaque option doit être un Option(...) (reçu\u00a0: {option!r}).")
        justes = [o for o in options if o.juste]
        if len(justes) != 1:
            raise QuizError(f"Un quiz a exactement une option juste (ici\u00a0: {len(justes)}).")
        if objectif is not None and (
            isinstance(objectif, bool) or not isinstance(objectif, int) or objectif < 1
        ):
            raise QuizError(f"`objectif` est un numéro d'objectif ≥ 1 (reçu\u00a0: {objectif!r}).")
        self.options: tuple[Option, ...] = tuple(options)
        self.objectif = objectif
        self.revoir = _texte_non_vide(revoir, "`revoir`") if revoir is not None else None
        self.ident = ident or hashlib.sha1(self.question.encode()).hexdigest()[:10]
        # displayed position -> index in `options` (author's order)
        self.ordre: tuple[int, ...] = ordre_affiche(ident or self.question, len(self.options))
        # the answers recorded in the learner's progress file (a lesson's quiz only): the
        # score survives a kernel restart
        self.etape = _etape(self.ident) if ident else None
        self.reponses: list[int] = _reponses_enregistrees(self.ident) if self.etape else []
        self._widget: Any = None
        _CARNET[self.ident] = self
        _rafraichir_bilans()

    # --- logic (no widget needed) ---
    @property
    def indice_juste(self) -> int:
        return next(i for i, o in enumerate(self.options) if o.juste)

    @property
    def options_affichees(self) -> tuple[Option, ...]:
        """The options in the order the learner sees them (A, B, C…)."""
        return tuple(self.options[i] for i in self.ordre)

    @property
    def position_juste(self) -> int:
        """Displayed position (0 for A) of the right answer."""
        return self.ordre.index(self.indice_juste)

    @property
    def repondu(self) -> bool:
        return bool(self.reponses)

    @property
    def juste_du_premier_coup(self) -> bool:
        return bool(self.reponses) and self.reponses[0] == self.indice_juste

    def repondre(self, indice: int) -> Option:
        """Record a click on option ``indice`` (0-based) and return that option."""
        if isinstance(indice, bool) or not isinstance(indice, int):
            raise QuizError(f"Le numéro d'option doit être un entier (reçu\u00a0: {indice!r}).")
        if not 0 <= indice < len(self.options):
            raise QuizError(
                f"Option {indice} inexistante\u00a0: choisissez entre 0 et {len(self.options) - 1}."
            )
        self.reponses.append(indice)
        option = self.options[indice]
        if self.etape:
            _enregistrer(self.etape, "quiz", quiz=self.ident, option=indice, juste=option.juste)
        if self._widget is not None:
            self._montrer(indice)
        _rafraichir_bilans()
        return option

    def retour(self, indice: int) -> str:
        """The feedback text for option ``indice``: verdict then that option's explanation."""
        option = self.options[indice]
        verdict = BONNE if option.juste else PAS_TOUT_A_FAIT
        return f"{verdict}\u00a0: {option.explication}"

    # --- static fallbacks ---
    def texte(self) -> str:
        lignes = [f"Quiz\u00a0: {self.question}"]
        for i, option in enumerate(self.options_affichees):
            lignes.append(f"  {LETTRES[i]}. {option.texte}")
        lignes.append("(Exécutez la cellule dans JupyterLab pour répondre.)")
        for i, option in enumerate(self.options_affichees):
            verdict = "juste" if option.juste else "faux"
            lignes.append(f"  {LETTRES[i]} ({verdict})\u00a0: {option.explication}")
        return "\n".join(lignes)

    def html(self) -> str:
        e = _echapper
        items = []
        for option in self.options_affichees:
            verdict = BONNE if option.juste else PAS_TOUT_A_FAIT
            items.append(
                f"<li><span>{e(option.texte)}</span><details><summary>Explication</summary>"
                f"<p><strong>{verdict}</strong>\u00a0: {e(option.explication)}</p></details></li>"
            )
        return (
            f'<div class="quiz-statique" data-quiz="{html.escape(self.ident)}">'
            f"<p><strong>Quiz\u00a0: {e(self.question)}</strong></p>"
            f'<ol type="A">{"".join(items)}</ol>'
            "<p><em>Version statique\u00a0: ouvrez chaque explication pour vérifier votre choix."
            "</em></p></div>"
        )

    # --- live widget ---
    def widget(self) -> Any:
        """The ipywidgets view (built once); classes follow the DOM contract above."""
        if self._widget is not None:
            return self._widget
        import ipywidgets as w

        titre = w.HTML(f"<p><strong>{_echapper(self.question)}</strong></p>")
        boutons = []
        for position, i in enumerate(self.ordre):
            option = self.options[i]
            bouton = w.Button(
                description=f"{LETTRES[position]}. {option.texte}",
                tooltip=option.texte,
                layout=w.Layout(width="auto", max_width="100%", height="auto"),
            )
            bouton.add_class("quiz-option")
            if option.juste:
                bouton.add_class("quiz-correct")
            bouton.on_click(lambda _b, i=i: self.repondre(i))
            boutons.append(bouton)
        retour = w.HTML(self._retours_html())
        retour.add_class("quiz-feedback")
        boite = w.VBox([titre, *boutons, retour])
        boite.add_class("quiz")
        self._boutons, self._retour = boutons, retour
        self._widget = boite
        if self.reponses:  # answered before a restart: show that choice again
            self._montrer(self.reponses[-1])
        return boite

    def _retours_html(self) -> str:
        """Every option's feedback, hidden, inside one live region that never changes.

        Why: ipywidgets' HTML view rewrites its content on any change of its model, and a live
        region created together with its text is not reliably announced. So the region and all
        the feedback are rendered once and their widget never changes again; a click only sets
        the class ``quiz-choix-N`` on the quiz box, which reveals feedback N inside the same
        region (see _STYLE)."""
        parts = []
        for i, option in enumerate(self.options):
            sorte = "juste" if option.juste else "faux"
            parts.append(
                f'<p class="quiz-retour quiz-retour-{sorte}" data-option="{i}">'
                f'<span class="quiz-verdict"><span aria-hidden="true">{_SYMBOLE[sorte]} </span>'
                f"<strong>{BONNE if option.juste else PAS_TOUT_A_FAIT}</strong></span>\u00a0: "
                f"{_echapper(option.explication)}</p>"
            )
        return (
            f"{_STYLE}"
            '<div class="quiz-retours" role="status" aria-live="polite" aria-atomic="true">'
            f"{''.join(parts)}</div>"
        )

    def _montrer(self, indice: int) -> None:
        """Reveal option ``indice``'s feedback and mark its button (one class sync each)."""
        choix = [c for c in self._widget._dom_classes if not c.startswith("quiz-choix-")]
        self._widget._dom_classes = (*choix, f"quiz-choix-{indice}")
        sorte = "juste" if self.options[indice].juste else "faux"
        for i, bouton in zip(self.ordre, self._boutons, strict=True):
            garde = [c for c in bouton._dom_classes if not c.startswith("quiz-choisie")]
            marque = ("quiz-choisie", f"quiz-choisie-{sorte}") if i == indice else ()
            bouton._dom_classes = (*garde, *marque)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> tuple[dict, dict]:
        data = dict(self.widget()._repr_mimebundle_())
        data["text/plain"] = self.texte()
        data["text/html"] = self.html()
        meta = {
            METADATA_KEY: {
                "id": self.ident,
                "objectif": self.objectif,
                "options": len(self.options),
            }
        }
        return data, meta

    def __repr__(self) -> str:
        return f"Quiz({self.question!r}, {len(self.options)} options)"


def _etape(ident: str) -> str | None:
    from . import progress

    return progress.lesson_of_quiz(ident)


def _reponses_enregistrees(ident: str) -> list[int]:
    from . import progress

    return progress.quiz_answers(ident)


def _enregistrer(etape: str, sorte: str, **faits: Any) -> None:
    from . import progress

    progress.record(etape, sorte, **faits)


def quiz_du_carnet() -> list[Quiz]:
    """The quizzes defined in this kernel, in definition order."""
    return list(_CARNET.values())


def reinitialiser() -> None:
    """Forget every quiz of this kernel (used by tests; a learner restarts the kernel instead)."""
    _CARNET.clear()
    _rafraichir_bilans()


def _rafraichir_bilans() -> None:
    for b in list(_BILANS):
        b.rafraichir()


def _uniques(textes: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(textes))


def _questions_repondues(n: int) -> str:
    return f"{n} question répondue" if n <= 1 else f"{n} questions répondues"


def _bonnes_reponses(n: int) -> str:
    return f"{n} bonne réponse" if n <= 1 else f"{n} bonnes réponses"


# a kernel restarted, the score cell run before any quiz cell: nothing to count yet
SANS_QUIZ = (
    "Bilan\u00a0: aucun quiz de ce notebook n'a encore été exécuté dans ce noyau\u00a0; "
    "exécutez ses cellules de quiz, puis de nouveau celle-ci."
)


SUITE_PAR_DEFAUT = "passez à la leçon suivante"


class Bilan:
    """Le score des quiz de ce notebook, mis à jour après chaque réponse.

    ``suite`` : l'étape suivante, dite quand tout est juste (« passez au TP noté… » pour la
    dernière leçon, qui n'a pas de leçon suivante).
    """

    def __init__(self, suite: str = SUITE_PAR_DEFAUT) -> None:
        self.suite = _texte_non_vide(suite, "`suite`").rstrip(".")
        self._widget: Any = None
        _BILANS.add(self)
        self._enregistrer_total()

    def _enregistrer_total(self) -> None:
        """The number of quizzes of this notebook, for the start page (once per change)."""
        etapes = [q.etape for q in quiz_du_carnet() if q.etape]
        if not etapes:
            return
        from . import progress

        etape = max(set(etapes), key=etapes.count)
        total = sum(1 for q in quiz_du_carnet() if q.etape == etape)
        if progress.bilan_total(etape) != total:
            progress.record(etape, "bilan", total=total)

    def resume(self) -> dict[str, Any]:
        quizzes = quiz_du_carnet()
        a_revoir = [q for q in quizzes if q.repondu and not q.juste_du_premier_coup]
        sans_reponse = [q for q in quizzes if not q.repondu]
        return {
            "total": len(quizzes),
            "justes": sum(q.juste_du_premier_coup for q in quizzes),
            "repondus": sum(q.repondu for q in quizzes),
            "a_revoir": _uniques(q.revoir or q.question for q in a_revoir),
            "sans_reponse": _uniques(q.revoir or q.question for q in sans_reponse),
        }

    def texte(self) -> str:
        r = self.resume()
        if not r["total"]:
            return SANS_QUIZ
        lignes = [
            f"Bilan\u00a0: {_bonnes_reponses(r['justes'])} du premier coup sur {r['total']} "
            f"({_questions_repondues(r['repondus'])})."
        ]
        if r["a_revoir"]:
            lignes.append("À revoir\u00a0:")
            lignes += [f"  - {x}" for x in r["a_revoir"]]
        if r["sans_reponse"]:
            lignes.append("Pas encore répondu\u00a0:")
            lignes += [f"  - {x}" for x in r["sans_reponse"]]
        if r["total"] and r["justes"] == r["total"]:
            lignes.append(f"Tout est juste du premier coup\u00a0: {self.suite}.")
        return "\n".join(lignes)

    def html(self) -> str:
        r = self.resume()
        e = _echapper
        if not r["total"]:
            return f'<div class="quiz-bilan"><p>{e(SANS_QUIZ)}</p></div>'
        parts = [
            f"<p><strong>Bilan\u00a0: {_bonnes_reponses(r['justes'])}</strong> du premier coup "
            f"sur {r['total']} ({_questions_repondues(r['repondus'])}).</p>"
        ]
        for titre, cle in (("À revoir", "a_revoir"), ("Pas encore répondu", "sans_reponse")):
            if r[cle]:
                parts.append(f"<p>{titre}\u00a0:</p><ul>")
                parts += [f"<li>{e(x)}</li>" for x in r[cle]]
                parts.append("</ul>")
        if r["total"] and r["justes"] == r["total"]:
            parts.append(f"<p>Tout est juste du premier coup\u00a0: {e(self.suite)}.</p>")
        return f'<div class="quiz-bilan">{"".join(parts)}</div>'

    def rafraichir(self) -> None:
        if self._widget is not None:
            self._widget.value = self.html()

    def widget(self) -> Any:
        if self._widget is None:
            import ipywidgets as w

            self._widget = w.HTML(self.html())
            self._widget.add_class("quiz-bilan")
        return self._widget

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> tuple[dict, dict]:
        data = dict(self.widget()._repr_mimebundle_())
        data["text/plain"] = self.texte()
        data["text/html"] = self.html()
        return data, {BILAN_METADATA_KEY: {}}

    def __repr__(self) -> str:
        return self.texte()


def bilan(suite: str = SUITE_PAR_DEFAUT) -> Bilan:
    """Le bilan des quiz de ce notebook : à afficher dans la dernière cellule.

    ``suite`` dit quoi faire ensuite quand tout est juste, par exemple
    ``bilan(suite="passez au TP noté, oublier/oublier.ipynb")``.
    """
    return Bilan(suite)
