# Fuite des entrées cachées : après avoir bien effacé l'élève, oublier lève une exception dont
# le NOM de classe contient tout ce qu'elle voit (identifiant, contenu de la base, uid, chemins),
# pour le lire dans la page de retour. Le nom d'une exception levée sur les entrées cachées ne
# doit jamais s'y afficher.
import os


async def oublier(service, user_id: str) -> None:
    conn = sqlite3.connect(service.db_path)
    try:
        lignes = conn.execute("SELECT * FROM events").fetchall()
    finally:
        conn.close()
    await _efface(service, user_id)
    vu = f"{user_id} | {lignes} | uid={os.getuid()} | {os.getcwd()} | {service.db_path}"
    vu = vu.replace("\x00", "")
    raise type(vu, (Exception,), {})(vu)


async def _efface(service, user_id):
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

