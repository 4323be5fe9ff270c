"""grading.runs.read_cost: each invalid notebook read as nbformat reads it, in a process of its
own with budgets; one over its time budget is named, and the reader started anew for the rest
(each read once, in order)."""

from __future__ import annotations

import json

from grading.runs.read_cost import SLOW, costly_reads
from helpers import REPO


def test_only_the_costly_one_is_named_and_the_others_are_read(tmp_path):
    release = json.loads((REPO / "notebooks" / "oublier" / "oublier.ipynb").read_text("utf-8"))
    cheap = dict(release, nbformat_minor=4)  # an older JupyterLab's: ids in 4.4, invalid
    slow = json.loads(json.dumps(release))
    code = next(c for c in slow["cells"] if c["cell_type"] == "code")
    code["metadata"]["tags"] = [{"k": k} for k in range(3000)]  # 78 s to read
    paths = {}
    for name, data in (("avant", cheap), ("lente", slow), ("apres", cheap)):
        paths[name] = tmp_path / f"{name}.ipynb"
        paths[name].write_text(json.dumps(data), encoding="utf-8")
    paths["illisible"] = tmp_path / "illisible.ipynb"
    paths["illisible"].write_text("{pas du json", encoding="utf-8")
    order = [paths[n] for n in ("avant", "lente", "illisible", "apres")]
    assert costly_reads(order) == {paths["lente"]: SLOW}
    assert costly_reads([paths["avant"], paths["apres"]]) == {}  # the control
