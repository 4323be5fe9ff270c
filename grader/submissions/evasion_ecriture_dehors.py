# Tentative d'évasion : écrire hors de son dossier de travail, dans un dossier de l'enseignant
# (celui du processus parent s'il contient la configuration de nbgrader, ou celui qu'un test
# indique). Si elle y arrive, elle efface l'élève correctement (10/10) ; dans le bac à sable, ces
# dossiers n'existent pas (0/10).
import os
from pathlib import Path

CIBLE = ""  # un test peut ajouter ici un dossier de l'enseignant


def _ecrit_dehors():
    dossiers = [CIBLE] if CIBLE else []
    parent = f"/proc/{os.getppid()}/cwd"
    if os.path.exists(os.path.join(parent, "nbgrader_config.py")):
        dossiers.append(parent)
    for dossier in dossiers:
        if not os.path.isdir(dossier):
            continue
        try:
            Path(dossier, "evasion_oublier.txt").write_text("écrit par un rendu\n")
            return True
        except OSError:
            pass
    return False


async def oublier(service, user_id: str) -> None:
    if not _ecrit_dehors():
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
