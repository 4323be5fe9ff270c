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
    "SCORE_NOT_SAVED",
    "SCORE_METADATA_KEY",
    "RIGHT",
    "NOT_QUITE",
    "Bilan",
    "Option",
    "Quiz",
    "QuizError",
    "bilan",
    "display_order",
    "notebook_quizzes",
    "reset",
]

RIGHT = "Bonne réponse"
NOT_QUITE = "Pas tout à fait"
METADATA_KEY = "course/quiz"
SCORE_METADATA_KEY = "course/bilan"
# What a saved notebook shows in place of the score (see course.save_hook): the answers live
# in the kernel only, so a score saved with the file would be stale once it is reopened.
SCORE_NOT_SAVED = (
    "Bilan\u00a0: les réponses aux quiz ne sont pas enregistrées avec le notebook. Exécutez "
    "les cellules de quiz, répondez, puis exécutez cette cellule pour voir votre score."
)
LETTERS = "ABCDEFGHIJ"
_SYMBOL = {"juste": "✓", "faux": "✗"}
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
        for i in range(len(LETTERS))
    )
    + ".quiz-option.quiz-choisie-juste{box-shadow:inset 0 0 0 2px var(--jp-success-color1,#388e3c)}"
    ".quiz-option.quiz-choisie-faux{box-shadow:inset 0 0 0 2px var(--jp-error-color1,#d32f2f)}"
    "</style>"
)


class QuizError(ValueError):
    """Quiz mal défini (message en français : c'est l'auteur ou l'élève qui le lit)."""


def _escape(text: str) -> str:
    """Escape text content (quotes stay readable: they are not inside an attribute)."""
    return html.escape(text, quote=False)


def _non_empty_text(value: object, name: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise QuizError(f"{name} doit être un texte non vide (reçu\u00a0: {value!r}).")
    return value.strip()


@dataclass(frozen=True)
class Option:
    """Une réponse proposée : son texte, si elle est juste, et pourquoi."""

    texte: str
    juste: bool
    explication: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "texte", _non_empty_text(self.texte, "Le texte d'une option"))
        object.__setattr__(
            self, "explication", _non_empty_text(self.explication, "L'explication d'une option")
        )
        if not isinstance(self.juste, bool):
            raise QuizError(f"`juste` doit valoir True ou False (reçu\u00a0: {self.juste!r}).")


def display_order(key: str, n: int) -> tuple[int, ...]:
    """A permutation of ``range(n)`` drawn from ``key``: the same key always gives the same order.

    Why: written by hand, the right answer drifts to the first place; shuffling once per quiz
    (not per run) keeps the order stable for a class, a screenshot and a saved notebook.
    """
    seed = int.from_bytes(hashlib.sha256(key.encode("utf-8")).digest(), "big")
    order = list(range(n))
    random.Random(seed).shuffle(order)
    return tuple(order)


# Quizzes defined in this kernel (one kernel = one notebook), in definition order.
# Keyed by id so that re-running a cell replaces its quiz instead of counting it twice.
_NOTEBOOK: dict[str, Quiz] = {}
_SCORES: weakref.WeakSet[Bilan] = weakref.WeakSet()


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
        self.question = _non_empty_text(question, "La question")
        options = list(options) if not isinstance(options, str) else []
        if len(options) < 2 or len(options) > len(LETTERS):
            raise QuizError(
                f"Un quiz propose entre 2 et {len(LETTERS)} options (reçu\u00a0: {len(options)})."
            )
        for option in options:
            if not isinstance(option, Option):
                raise QuizError(f"Chaque option doit être un Option(...) (reçu\u00a0: {option!r}).")
        right = [o for o in options if o.juste]
        if len(right) != 1:
            raise QuizError(f"Un quiz a exactement une option juste (ici\u00a0: {len(right)}).")
        if objectif is not None and (
            isinstance(objectif, bool) or not isinstance(objectif, int) or objectif < 1
        ):
            raise QuizError(f"`objectif` est un numéro d'objectif ≥ 1 (reçu\u00a0: {objectif!r}).")
        self.options: tuple[Option, ...] = tuple(options)
        self.objectif = objectif
        self.revoir = _non_empty_text(revoir, "`revoir`") if revoir is not None else None
        self.ident = ident or hashlib.sha1(self.question.encode()).hexdigest()[:10]
        # displayed position -> index in `options` (author's order)
        self.ordre: tuple[int, ...] = display_order(ident or self.question, len(self.options))
        # the answers recorded in the learner's progress file (a lesson's quiz only): the
        # score survives a kernel restart
        self.etape = _lesson_of(self.ident) if ident else None
        self.reponses: list[int] = _saved_answers(self.ident) if self.etape else []
        self._widget: Any = None
        _NOTEBOOK[self.ident] = self
        _refresh_scores()

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
            _record(self.etape, "quiz", quiz=self.ident, option=indice, juste=option.juste)
        if self._widget is not None:
            self._show(indice)
        _refresh_scores()
        return option

    def retour(self, indice: int) -> str:
        """The feedback text for option ``indice``: verdict then that option's explanation."""
        option = self.options[indice]
        verdict = RIGHT if option.juste else NOT_QUITE
        return f"{verdict}\u00a0: {option.explication}"

    # --- static fallbacks ---
    def texte(self) -> str:
        lines = [f"Quiz\u00a0: {self.question}"]
        for i, option in enumerate(self.options_affichees):
            lines.append(f"  {LETTERS[i]}. {option.texte}")
        lines.append("(Exécutez la cellule dans JupyterLab pour répondre.)")
        for i, option in enumerate(self.options_affichees):
            verdict = "juste" if option.juste else "faux"
            lines.append(f"  {LETTERS[i]} ({verdict})\u00a0: {option.explication}")
        return "\n".join(lines)

    def html(self) -> str:
        e = _escape
        items = []
        for option in self.options_affichees:
            verdict = RIGHT if option.juste else NOT_QUITE
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

        title = w.HTML(f"<p><strong>{_escape(self.question)}</strong></p>")
        buttons = []
        for position, i in enumerate(self.ordre):
            option = self.options[i]
            button = w.Button(
                description=f"{LETTERS[position]}. {option.texte}",
                tooltip=option.texte,
                layout=w.Layout(width="auto", max_width="100%", height="auto"),
            )
            button.add_class("quiz-option")
            if option.juste:
                button.add_class("quiz-correct")
            button.on_click(lambda _b, i=i: self.repondre(i))
            buttons.append(button)
        feedback = w.HTML(self._feedback_html())
        feedback.add_class("quiz-feedback")
        box = w.VBox([title, *buttons, feedback])
        box.add_class("quiz")
        self._buttons, self._feedback = buttons, feedback
        self._widget = box
        if self.reponses:  # answered before a restart: show that choice again
            self._show(self.reponses[-1])
        return box

    def _feedback_html(self) -> str:
        """Every option's feedback, hidden, inside one live region that never changes.

        Why: ipywidgets' HTML view rewrites its content on any change of its model, and a live
        region created together with its text is not reliably announced. So the region and all
        the feedback are rendered once and their widget never changes again; a click only sets
        the class ``quiz-choix-N`` on the quiz box, which reveals feedback N inside the same
        region (see _STYLE)."""
        parts = []
        for i, option in enumerate(self.options):
            kind = "juste" if option.juste else "faux"
            parts.append(
                f'<p class="quiz-retour quiz-retour-{kind}" data-option="{i}">'
                f'<span class="quiz-verdict"><span aria-hidden="true">{_SYMBOL[kind]} </span>'
                f"<strong>{RIGHT if option.juste else NOT_QUITE}</strong></span>\u00a0: "
                f"{_escape(option.explication)}</p>"
            )
        return (
            f"{_STYLE}"
            '<div class="quiz-retours" role="status" aria-live="polite" aria-atomic="true">'
            f"{''.join(parts)}</div>"
        )

    def _show(self, indice: int) -> None:
        """Reveal option ``indice``'s feedback and mark its button (one class sync each)."""
        others = [c for c in self._widget._dom_classes if not c.startswith("quiz-choix-")]
        self._widget._dom_classes = (*others, f"quiz-choix-{indice}")
        kind = "juste" if self.options[indice].juste else "faux"
        for i, button in zip(self.ordre, self._buttons, strict=True):
            kept = [c for c in button._dom_classes if not c.startswith("quiz-choisie")]
            marks = ("quiz-choisie", f"quiz-choisie-{kind}") if i == indice else ()
            button._dom_classes = (*kept, *marks)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> tuple[dict, dict]:
        data = dict(self.widget()._repr_mimebundle_())
        data["text/plain"] = self.texte()
        data["text/html"] = self.html()
        meta = {
            METADATA_KEY: {
                "id": self.ident,
                "objective": self.objectif,
                "options": len(self.options),
            }
        }
        return data, meta

    def __repr__(self) -> str:
        return f"Quiz({self.question!r}, {len(self.options)} options)"


def _lesson_of(ident: str) -> str | None:
    from . import progress

    return progress.lesson_of_quiz(ident)


def _saved_answers(ident: str) -> list[int]:
    from . import progress

    return progress.quiz_answers(ident)


def _record(step: str, kind: str, **facts: Any) -> None:
    from . import progress

    progress.record(step, kind, **facts)


def notebook_quizzes() -> list[Quiz]:
    """The quizzes defined in this kernel, in definition order."""
    return list(_NOTEBOOK.values())


def reset() -> None:
    """Forget every quiz of this kernel (used by tests; a learner restarts the kernel instead)."""
    _NOTEBOOK.clear()
    _refresh_scores()


def _refresh_scores() -> None:
    for b in list(_SCORES):
        b.rafraichir()


def _unique(texts: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(texts))


def _questions_answered(n: int) -> str:
    return f"{n} question répondue" if n <= 1 else f"{n} questions répondues"


def _right_answers(n: int) -> str:
    return f"{n} bonne réponse" if n <= 1 else f"{n} bonnes réponses"


# a kernel restarted, the score cell run before any quiz cell: nothing to count yet
NO_QUIZ_YET = (
    "Bilan\u00a0: aucun quiz de ce notebook n'a encore été exécuté dans ce noyau\u00a0; "
    "exécutez ses cellules de quiz, puis de nouveau celle-ci."
)


DEFAULT_NEXT = "passez à la leçon suivante"


def _not_run(n: int) -> str:
    return (
        f"Pas encore exécuté{'s' if n > 1 else ''} dans ce noyau\u00a0: {n} quiz de ce "
        "notebook (exécutez leurs cellules, puis de nouveau celle-ci)."
    )


class Bilan:
    """Le score des quiz de ce notebook, mis à jour après chaque réponse.

    ``suite`` : l'étape suivante, dite quand tout est juste (« passez au TP noté… » pour la
    dernière leçon, qui n'a pas de leçon suivante).
    """

    def __init__(self, suite: str = DEFAULT_NEXT) -> None:
        self.suite = _non_empty_text(suite, "`suite`").rstrip(".")
        self._widget: Any = None
        _SCORES.add(self)
        self._record_total()

    @staticmethod
    def _step_and_total() -> tuple[str | None, int]:
        """The step most of this kernel's quizzes belong to (None: the course's own none), and
        its notebook's number of quizzes: those run in this kernel, or the notebook's own count
        when some were not (a restart, a partial run)."""
        from . import progress

        quizzes = notebook_quizzes()
        steps = [q.etape for q in quizzes if q.etape]
        if not steps:
            return None, len(quizzes)
        step = max(set(steps), key=steps.count)
        return step, max(progress.quiz_count(step), sum(q.etape == step for q in quizzes))

    def _record_total(self) -> None:
        """The number of quizzes of this notebook, for the start page (once per change)."""
        step, total = self._step_and_total()
        if step is None:
            return
        from . import progress

        if progress.quiz_total(step) != total:
            progress.record(step, "bilan", total=total)

    def resume(self) -> dict[str, Any]:
        quizzes = notebook_quizzes()
        to_review = [q for q in quizzes if q.repondu and not q.juste_du_premier_coup]
        unanswered = [q for q in quizzes if not q.repondu]
        step, total = self._step_and_total()
        # the notebook's quiz cells not run in this kernel
        not_run = max(total - len(quizzes), 0) if step else 0
        return {
            "total": len(quizzes) + not_run,
            "right": sum(q.juste_du_premier_coup for q in quizzes),
            "answered": sum(q.repondu for q in quizzes),
            "to_review": _unique(q.revoir or q.question for q in to_review),
            "unanswered": _unique(q.revoir or q.question for q in unanswered),
            "not_run": not_run,
        }

    def texte(self) -> str:
        r = self.resume()
        if not r["total"]:
            return NO_QUIZ_YET
        lines = [
            f"Bilan\u00a0: {_right_answers(r['right'])} du premier coup sur {r['total']} "
            f"({_questions_answered(r['answered'])})."
        ]
        if r["to_review"]:
            lines.append("À revoir\u00a0:")
            lines += [f"  - {x}" for x in r["to_review"]]
        if r["unanswered"]:
            lines.append("Pas encore répondu\u00a0:")
            lines += [f"  - {x}" for x in r["unanswered"]]
        if r["not_run"]:
            lines.append(_not_run(r["not_run"]))
        if r["total"] and r["right"] == r["total"]:
            lines.append(f"Tout est juste du premier coup\u00a0: {self.suite}.")
        return "\n".join(lines)

    def html(self) -> str:
        r = self.resume()
        e = _escape
        if not r["total"]:
            return f'<div class="quiz-bilan"><p>{e(NO_QUIZ_YET)}</p></div>'
        parts = [
            f"<p><strong>Bilan\u00a0: {_right_answers(r['right'])}</strong> du premier coup "
            f"sur {r['total']} ({_questions_answered(r['answered'])}).</p>"
        ]
        for title, key in (("À revoir", "to_review"), ("Pas encore répondu", "unanswered")):
            if r[key]:
                parts.append(f"<p>{title}\u00a0:</p><ul>")
                parts += [f"<li>{e(x)}</li>" for x in r[key]]
                parts.append("</ul>")
        if r["not_run"]:
            parts.append(f"<p>{e(_not_run(r['not_run']))}</p>")
        if r["total"] and r["right"] == r["total"]:
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
        return data, {SCORE_METADATA_KEY: {}}

    def __repr__(self) -> str:
        return self.texte()


def bilan(suite: str = DEFAULT_NEXT) -> Bilan:
    """Le bilan des quiz de ce notebook : à afficher dans la dernière cellule.

    ``suite`` dit quoi faire ensuite quand tout est juste, par exemple
    ``bilan(suite="passez au TP noté, oublier/oublier.ipynb")``.
    """
    return Bilan(suite)
