# Tentative d'évasion : lire le rendu d'un autre élève (submitted/<élève>/oublier/*.ipynb),
# trouvé depuis le dossier du processus parent ou les dossiers au-dessus. Si elle y arrive, elle
# efface l'élève correctement (10/10) ; dans le bac à sable, elle ne trouve rien (0/10).
import glob
import os
from pathlib import Path

CIBLE = ""  # un test peut ajouter ici le chemin exact d'un autre rendu


def _candidats():
    chemins = [CIBLE] if CIBLE else []
    for depart in (f"/proc/{os.getppid()}/cwd", os.getcwd()):
        dossier = Path(depart)
        for d in (dossier, *dossier.parents):
            for motif in ("submitted/*/*/*.ipynb", "grader/submitted/*/*/*.ipynb"):
                chemins += glob.glob(str(d / motif))
    return chemins


def _rendu_lu():
    for chemin in _candidats():
        try:
            with open(chemin, encoding="utf-8") as f:
                if '"cells"' in f.read():
                    return True
        except OSError:
            pass
    return False


async def oublier(service, user_id: str) -> None:
    if not _rendu_lu():
        return
    for s in (await service.list_sessions(app_name=APP_NAME, user_id=user_id)).sessions:
        await service.delete_session(app_name=APP_NAME, user_id=user_id, session_id=s.id)
    conn = sqlite3.connect(service.db_path)
    try:
        conn.execute("PRAGMA foreign_keys = ON")
        with conn:
            for table in ("events", "sessions", "user_states"):
                conn.execute(f"DELETE FROM {table} WHERE app_name = ? AND user_id = ?",
                             (APP_NAME, user_id))
        conn.execute("VACUUM")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()
