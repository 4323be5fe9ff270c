"""Attaque : une cellule ajoutée avant les tests pose la variable d'environnement que ``noter``
croyait posée par la notation (COURSE_LABO_GRADED_OUT_OF_KERNEL) et celle de nbgrader, et la
cellule oublier perd ses métadonnées (la notation ne la trouvait plus). La fonction n'efface rien.
Attendu : 0 ; la cellule ajoutée n'est jamais exécutée (canari absent).
"""

import nbformat

REPONSE = "ebauche"  # remplacée ci-dessous par une fonction qui n'efface rien


def carnet(nb, reponses, canari):
    answer = next(c for c in nb.cells if c.get("id") == "oublier")
    answer.metadata.pop("nbgrader", None)
    answer.source = "async def oublier(service, user_id: str) -> None:\n    pass"
    at = next(k for k, c in enumerate(nb.cells) if c.get("id") == "verifier")
    cell = nbformat.v4.new_code_cell(
        "import os\n"
        f"open({canari!r}, 'w').write('exécutée')\n"
        'os.environ["COURSE_LABO_GRADED_OUT_OF_KERNEL"] = "1"\n'
        'os.environ["NBGRADER_EXECUTION"] = ""\n'
    )
    nb.cells.insert(at, cell)
