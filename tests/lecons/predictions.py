"""What a learner has read before a quiz, and how much of a prediction's answer it already
states: the check of tests/lecons/test_predictions.py, kept apart so the test and its controls
call the same code.

The path is the start page's order (parcours.py): the start page, then every notebook of its
table (the TP included, where the table puts it), then the glossary. Everything before a quiz is
every cell of the notebooks before it and every cell above it in its own notebook, code and
Markdown, the earlier quizzes' options and explanations included (a learner reads them after a
click).

The measure: the right option and its explanation, cut into pairs of consecutive content words
(« dernière modification », « pages libres »), without the pairs the question itself uses (the
question is read before answering, so it gives nothing away) and without the pairs the wrong
options' texts use (shared words say nothing about which option is right). What is left is what
the right answer says and the others do not; ``stated`` is the share of those pairs found in
the text before the quiz. ``THRESHOLD`` was calibrated on the path of ff51117 (issue 34): the
four predictions found sound there score 0.00; seven of the ten found answered score 0.18 to 0.64
(l3-app, l4-reste, l5-wal, l6-wal, l6-reste, l7-fichier-par-instance, l7-wal-sauvegarde), and so
do l1-evenements (0.27, half-hinted) and l7-tables (0.30: lesson 3 already names the four tables).
Three answered by paraphrase (l1-redemarrage 0.00, l2-niveau 0.07, l3-temp 0.06) and the other
half-hint (l4-octets 0.08) stay under it: a word-pair measure does not see a paraphrase, so those
were judged by hand (they are recall quizzes now, or lost their hint).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path

import nbformat
from notebook_text import tags
from parcours import GLOSSARY, PARCOURS, SOLUTIONS, START

from course import quiz as q

__all__ = [
    "THRESHOLD",
    "Prediction",
    "build",
    "content_words",
    "pairs",
    "path_cells",
    "path_notebooks",
    "predictions",
    "stated",
]

# share of the right answer's own word pairs that the text before the quiz may already hold
THRESHOLD = 0.15
# French words that carry no fact: articles, pronouns, auxiliaries, common adverbs, and the
# course's pointers to its cells (« la cellule suivante le vérifie »)
STOPWORDS = frozenset(
    """
    a à au aux avec ce ces cet cette ceux c ça d de des du dans en et est être été était sont
    il ils elle elles on l la le les leur leurs lui mais ne ni n ou où par pas plus pour qu que
    qui quoi se sa son ses si sur s t un une y j je tu vous nous votre vos notre nos me m mon
    ma mes te ton ta tes même aussi alors donc puis car comme tout tous toute toutes très peut
    faut fait font ont avait aura sera seulement encore déjà ici là cela celle celui lequel
    laquelle dont quand après avant sans sous entre chaque autre autres rien ceci oui non bien
    va vont peu quel quelle soit
    cellule cellules suivante précédente montre vérifie
    """.split()
)


def normalise(text: str) -> str:
    """Lower case, accents kept, one kind of space and apostrophe, no Markdown marks."""
    text = unicodedata.normalize("NFC", text).lower()
    text = text.replace("\u00a0", " ").replace("\u202f", " ").replace("’", "'")
    return re.sub(r"[`*_\\#>|\[\]()]", " ", text)


def content_words(text: str) -> list[str]:
    """The words that carry content, in order (``-wal``, ``user:``, numbers kept)."""
    words = re.findall(r"-?[\w:]+", normalise(text))
    return [w.strip(":") for w in words if w.strip(":") and w.strip(":") not in STOPWORDS]


def pairs(text: str) -> set[tuple[str, str]]:
    words = content_words(text)
    return set(zip(words, words[1:], strict=False))


def build(source: str) -> q.Quiz:
    """The quiz a cell builds, as the kernel builds it (its registry left empty)."""
    q.reset()
    try:
        return eval(source, {"Quiz": q.Quiz, "Option": q.Option})  # noqa: S307
    finally:
        q.reset()


def path_notebooks() -> list[Path]:
    """Every notebook of the path in the start page's order, the TP where the table puts it."""
    named = [START, *(s.notebook for s in PARCOURS.steps), GLOSSARY]
    # a copy of the lessons alone (test_lesson_list.py) has no TP beside them; in this
    # checkout, test_predictions.py checks that the TP is on the path
    return [(SOLUTIONS / name).resolve() for name in named if (SOLUTIONS / name).is_file()]


def path_cells(notebooks: list[Path] | None = None) -> list[tuple[str, nbformat.NotebookNode]]:
    """(notebook name, cell) for every cell of the path, in the order a learner meets them."""
    return [
        (path.name, cell)
        for path in notebooks or path_notebooks()
        for cell in nbformat.read(path, as_version=4).cells
    ]


@dataclass(frozen=True)
class Prediction:
    notebook: str
    ident: str
    share: float  # of the right answer's own pairs, found before the quiz
    found: tuple[tuple[str, str], ...]  # those pairs, to say what gives the answer away


def stated(before: str, quiz: q.Quiz) -> Prediction:
    right = quiz.options[quiz.indice_juste]
    own = pairs(f"{right.texte} {right.explication}") - pairs(quiz.question)
    for option in quiz.options:
        if not option.juste:
            own -= pairs(option.texte)
    found = tuple(sorted(own & pairs(before)))
    return Prediction("", quiz.ident, len(found) / max(len(own), 1), found)


def predictions(cells: list[tuple[str, nbformat.NotebookNode]]) -> list[Prediction]:
    """Each prediction quiz of ``cells`` with the share of its answer stated before it."""
    found, before = [], []
    for name, cell in cells:
        if "prediction" in tags(cell):
            result = stated(" ".join(before), build(cell.source))
            found.append(Prediction(name, result.ident, result.share, result.found))
        before.append(cell.source)
    return found
