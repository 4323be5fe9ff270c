"""Hidden stays hidden: what students can read and import (the course as the hub installs it,
not editable, and the release notebook) names no hidden input, and nothing there can compute a
hidden verdict; the hidden plan lives in grader/grading only."""

from __future__ import annotations

import importlib
import json
import pkgutil
import subprocess
from pathlib import Path

import pytest
from grading.nbgrader_ext.hidden import HIDDEN
from helpers import REPO
from installed_course import installed_course

import course
from course.labo.criteria import TESTS
from course.labo.evaluate import evaluate_source
from course.labo.scenario import VISIBLE, Scenario


def _hidden_words() -> set[str]:
    words = {HIDDEN.learner, HIDDEN.unknown, HIDDEN.quoted, *HIDDEN.hostile, *HIDDEN.personal_data}
    words |= {"maelle", "artagnan", "Girard"}
    for learner in HIDDEN.extra_learners:
        words.add(learner.user_id)
        words |= {turn.text for session in learner.sessions for turn in session}
    assert not words & {VISIBLE.learner, VISIBLE.unknown, VISIBLE.quoted, *VISIBLE.hostile}
    # "%" (a LIKE's wildcard) is a hidden input too, but no secret: it is in any format string
    return {word for word in words if len(word) >= 4}


@pytest.mark.slow
def test_the_installed_package_names_no_hidden_input():
    installed = installed_course()
    record = next(installed.site_packages.glob("course_memoire_tuteur-*.dist-info")) / "RECORD"
    files = [
        installed.site_packages / line.split(",")[0] for line in record.read_text().splitlines()
    ]
    files = [f.resolve() for f in files if f.is_file()]
    assert any(f.name == "criteria.py" for f in files) and any(f.suffix == ".pyc" for f in files)
    for path in files:
        data = path.read_bytes()
        for word in _hidden_words():
            for encoded in {word.encode(), json.dumps(word)[1:-1].encode()}:
                assert encoded not in data, (path, word)


def test_the_release_notebook_names_no_hidden_input():
    nb = json.loads((REPO / "notebooks" / "oublier" / "oublier.ipynb").read_text("utf-8"))
    text = "\n".join("".join(cell["source"]) for cell in nb["cells"])
    for word in _hidden_words():
        assert word not in text, word


def test_no_module_of_the_course_holds_a_hidden_plan():
    """Every module of the package imported: the only scenario anywhere is the visible one."""
    found = []
    for module in pkgutil.walk_packages(course.__path__, "course."):
        if module.name.endswith("__main__"):  # a command, run on import
            continue
        loaded = importlib.import_module(module.name)
        for value in vars(loaded).values():
            items = value if isinstance(value, tuple | list) else (value,)
            found += [(module.name, item.name) for item in items if isinstance(item, Scenario)]
    assert found and {name for _module, name in found} == {VISIBLE.name}
    assert not any("grading" in line for line in _imports_of_the_package())


def _imports_of_the_package() -> list[str]:
    lines = []
    for path in Path(course.__file__).parent.rglob("*.py"):
        lines += [
            line
            for line in path.read_text("utf-8").splitlines()
            if line.lstrip().startswith(("import ", "from "))
        ]
    return lines


def test_what_students_run_gives_no_hidden_verdict(sample_answers):
    evaluation = evaluate_source(sample_answers["complete_vacuum"])
    assert set(evaluation.verdicts) == {t.id for t in TESTS.values() if t.visible}
    assert evaluation.max_score == 3


def test_a_student_importing_everything_finds_no_hidden_input():
    """In the installed copy's own interpreter, as a student would: import every module the TP
    uses and search every string they hold."""
    installed = installed_course()
    probe = """
import gc, json, sys
import course.labo, course.labo.evaluate, course.labo.submission_runner
import course.labo.snapshot_checker, course.labo.sandbox, course.labo.fixture
words = json.loads(sys.stdin.read())
texts = [o for o in gc.get_objects() if isinstance(o, (tuple, list, dict)) and o is not words]
strings = set()
for o in texts:
    items = o.values() if isinstance(o, dict) else o
    strings.update(s for s in items if isinstance(s, str))
mods = [m for m in sys.modules if m.startswith("grading")]
print(json.dumps({"hits": sorted(w for w in words if any(w in s for s in strings)), "mods": mods}))
"""
    done = subprocess.run(
        [str(installed.python), "-I", "-c", probe],
        input=json.dumps(sorted(_hidden_words())),
        capture_output=True,
        text=True,
        timeout=120,
        cwd="/",
        check=True,
    )
    assert json.loads(done.stdout) == {"hits": [], "mods": []}
