"""Le TP noté «\u00a0oublier un élève\u00a0»\u00a0: base d'exemple, vérification et notation.

- ``base_exemple()`` copie la base d'exemple (plusieurs élèves, deux applications), à
  explorer\u00a0;
- ``verifier(oublier)`` vérifie les sept critères de l'énoncé sur une copie de la base d'exemple
  et dit ce qui manque, une ligne par critère\u00a0;
- ``noter(oublier, "sessions")`` est ce qu'appellent les cellules de test du notebook\u00a0;
- ``cellule_oublier()`` relit votre cellule ``oublier`` dans le TP enregistré, et
  ``verifier(..., avec_adk=True)`` la vérifie sur la même base écrite par google-adk 2.10
  (l'annexe ADK).

Votre fonction ne s'exécute jamais dans le noyau du notebook\u00a0: elle tourne dans un processus
séparé, avec une limite de temps, sur une copie neuve de la base, et un autre processus lit
ensuite le fichier. Pendant la notation (nbgrader autograde), aucune cellule de votre notebook
n'est exécutée\u00a0: le processus de nbgrader prend votre fonction et la fait tourner dans un bac à
sable, avec d'autres élèves et d'autres identifiants que ceux de l'exemple\u00a0; rien de ce qui se
passe dans le noyau ne change la note. Ici, les tests cachés échouent toujours\u00a0: seule la
notation les calcule.
"""

from __future__ import annotations

from .checks import noter, verifier
from .fixture import base_exemple
from .tp_notebook import cellule_oublier

__all__ = ["base_exemple", "cellule_oublier", "noter", "verifier"]
