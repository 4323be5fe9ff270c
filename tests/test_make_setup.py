"""`make setup`, the learner's install, as README.md documents it without uv: INSTALLER=pip (also
the set-up's own fallback when uv cannot be had), a real install from the Makefile, apart from
tests/learner_env.py's (uv, shared by the lesson tests). A work unit of its own: about two
minutes of pip, beside the others (tests/work_units.py)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import REPO


def _make_setup(venv: Path, *words: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """``make setup VENV=venv WORDS…`` as a learner types it (no bytecode: 15 s with uv)."""
    env = env or {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    return subprocess.run(
        ["make", "--no-print-directory", "-C", str(REPO), "setup", f"VENV={venv}"]
        + [*words, "UV_COMPILE_BYTECODE=0"],
        env=env,
        capture_output=True,
        text=True,
        timeout=840,
    )


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_make_setup_with_pip_then_with_the_python_the_learner_names(tmp_path: Path) -> None:
    """One venv, a whole install only where the venv must change: first made by `make setup
    INSTALLER=pip`, then through the four findings on ``make setup PYTHON=…``.

    `make setup INSTALLER=pip` (the README's way without uv, and the set-up's own fallback
    when uv cannot be had) installs the lab's lock with pip alone, into a venv whose path holds
    an apostrophe and an accent (every path the Makefile hands to the shell is quoted). pip
    resolves nothing: in hash mode it refused the lock, which leaves rfc3987-syntax out.

    - review7: a learner who made the venv with her default ``python3`` (3.11) and asks for
      the newer one the lessons run on, ``make setup PYTHON=python3.13``, got nothing
      (``.stamp-venv`` was there; exit 0, every lesson still on 3.11);
    - review8: a ``PYTHON`` her shell exports for another tool (node-gyp documents ``export
      PYTHON=python3``) remade the venv at her next ``make lab`` (whose first step is ``make
      setup``): the Python she chose lasted until then;
    - review8: a venv whose Python was uninstalled (``pyenv uninstall``, a Homebrew upgrade)
      has a broken ``bin/python``; ``make setup PYTHON=python3.13`` found the stamps up to
      date, did nothing, exit 0, and ``make lab`` failed on a Python that is not there;
    - review8: 3695524 remakes a venv of another Python with ``python -m venv --clear VENV``,
      « it holds nothing but what the set-ups install ». That is true of .venv, not of a
      ``VENV=`` (a path variable grader/Makefile documents): ``--clear`` empties the whole
      folder. A learner keeps one environment for her AI work, ``~/ia``, with her notebook and
      her project's data in it, and points the course at it; ``make setup VENV=~/ia
      PYTHON=python3.13`` deletes her notebook and her data, exit 0. Control: ``make setup
      VENV=~/ia`` with the venv's own Python installs the lab and keeps them (here the first
      step, the pip install, which makes her venv in that folder; she then moves her files out,
      as the refusal says, and the findings above go on in the same venv).

    Controls: the command line is obeyed over the exported variable, each way."""
    from learner_env import learner_python

    base = Path(getattr(sys, "_base_executable", sys.executable))
    newer = learner_python()
    installed = tmp_path / "pyenv" / "bin"  # a Python installed there, removed later
    installed.mkdir(parents=True)
    (installed / base.name).symlink_to(base.resolve())
    venv = tmp_path / "l'élève" / "ia"
    venv.mkdir(parents=True)  # her folder, her notebook and her project's data in it
    notes = venv / "mes-notes.ipynb"
    notes.write_text('{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}\n')
    (venv / "projet").mkdir()
    data = venv / "projet" / "mesures.csv"
    data.write_text("jour,valeur\n1,42\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "UV")}
    # pip's bytecode compilation left out here (a learner's pip does it): 91 s instead of 124 s
    env["PIP_NO_COMPILE"] = "1"
    env["PYTHON"] = str(newer)  # her shell's `export PYTHON=…`, for another tool
    asked = ["-c", "import sys; print('%d.%d' % sys.version_info[:2])"]
    older, newest = (
        subprocess.run([str(p), *asked], capture_output=True, text=True, check=True).stdout
        for p in (base, newer)
    )

    def version(*words: str) -> str:
        python = venv / "bin" / "python"
        assert python.exists(), f"make setup {' '.join(words)} a laissé un venv sans Python"
        return subprocess.run([str(python), *asked], capture_output=True, text=True).stdout

    # the interpreter the test set-up was made from (a venv's python would nest venvs), by the
    # path of its "installation" (uninstalled below); the command line wins over the export
    done = _make_setup(venv, "INSTALLER=pip", f"PYTHON={installed / base.name}", env=env)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "pip install --no-deps --require-hashes -r requirements/lab.txt" in done.stdout
    assert "uv pip install" not in done.stdout and not (venv / "bin" / "uv").exists()
    # what a lesson's first cell imports, the course from this checkout, and (--no-deps) not
    # the package the lock leaves out
    lesson = (
        "from course.sessions import SqliteSessionService; from course.tuteur import demo; "
        "import course, jupyterlab, nbgrader, ipykernel, importlib.util; "
        "assert importlib.util.find_spec('rfc3987_syntax') is None; print(course.__file__)"
    )
    check = subprocess.run(
        [str(venv / "bin" / "python"), "-c", lesson],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert check.returncode == 0, check.stderr
    assert check.stdout.strip() == str(REPO / "course" / "__init__.py")
    assert version("INSTALLER=pip", f"PYTHON={installed / base.name}") == older  # control
    assert notes.exists() and data.exists()  # control: the lab installed beside her files
    if newer == base:
        pytest.skip("une seule version de Python sur cette machine")

    def make(*words: str) -> str:
        done = _make_setup(venv, *words, env=env)
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        return version(*words)

    done = _make_setup(venv, f"PYTHON={newer}", env=env)
    lost = [str(p) for p in (notes, data) if not p.exists()]
    assert not lost, f"make setup PYTHON={newer} a effacé {lost}\n{done.stdout[-2000:]}"
    moved = tmp_path / "rangement"  # she moves her files out of the venv, as she is told
    moved.mkdir()
    for mine in (notes, venv / "projet"):
        mine.rename(moved / mine.name)
    assert make(f"PYTHON={newer}") == newest, f"make setup PYTHON={newer} a gardé Python {older}"
    assert make(f"PYTHON={installed / base.name}") == older  # control, the other way
    assert make() == older, f"make setup (PYTHON={newer} exporté) a refait le venv choisi"
    (installed / base.name).unlink()  # that Python uninstalled
    assert not (venv / "bin" / "python").exists() and (venv / "bin" / "python").is_symlink()
    assert make(f"PYTHON={newer}") == newest


@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.parametrize("installer", ["uv", "pip"])
def test_an_install_without_network_ends_in_one_french_sentence(tmp_path: Path, installer) -> None:
    """Teacher's walk, stop 56: ``make lab`` in a classroom without network printed pip's
    English « No matching distribution found », then « uv indisponible : installation avec
    pip », which blamed uv. It now ends in one French sentence naming the cause (the first
    install downloads from PyPI) and what to do. Here PyPI is a closed port, no cache."""
    closed = "http://127.0.0.1:9/simple"
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    env |= {"PIP_CONFIG_FILE": os.devnull, "PIP_INDEX_URL": closed, "PIP_NO_CACHE_DIR": "1"}
    env |= {"PIP_RETRIES": "0", "PIP_TIMEOUT": "2", "UV_INDEX_URL": closed, "UV_NO_CACHE": "1"}
    env |= {"UV_NO_CONFIG": "1", "UV_CONCURRENT_DOWNLOADS": "1"}
    done = _make_setup(tmp_path / "venv", f"INSTALLER={installer}", env=env)
    said = done.stdout + done.stderr
    assert done.returncode != 0, said
    assert "✘ Installation impossible" in said and "il faut le réseau" in said, said[-2000:]
    assert "Traceback" not in said
