# Une copie cachée à côté de la base : avant d'effacer l'élève (correctement, VACUUM compris),
# oublier attache une autre base dans son dossier de travail et y recopie ses lignes en base64.
# Les données de l'élève restent dans les fichiers du rendu : le critère 7 est perdu (9/10).
import base64


async def oublier(service, user_id: str) -> None:
    conn = sqlite3.connect(service.db_path)
    try:
        conn.execute("ATTACH DATABASE 'archives.db' AS archives")
        with conn:
            conn.execute("CREATE TABLE IF NOT EXISTS archives.lignes (donnees TEXT)")
            for ligne in conn.execute("SELECT * FROM events WHERE user_id = ?", (user_id,)):
                texte = base64.b64encode(repr(ligne).encode()).decode()
                conn.execute("INSERT INTO archives.lignes VALUES (?)", (texte,))
        conn.execute("DETACH DATABASE archives")
    finally:
        conn.close()
    await _efface(service, user_id)


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

