# Une copie cachée dans les pages libres : oublier efface l'élève correctement (VACUUM compris),
# puis recopie ses lignes, encodées en base64, dans une table qu'elle supprime aussitôt (DROP
# TABLE, sans VACUUM après) : le schéma redevient celui d'origine, mais les pages libérées
# gardent la copie. Les données de l'élève restent lisibles dans le fichier : le critère 7 est
# perdu (9/10).
import base64


async def oublier(service, user_id: str) -> None:
    conn = sqlite3.connect(service.db_path)
    try:
        lignes = [
            base64.b64encode(repr(ligne).encode()).decode()
            for table in ("events", "sessions", "user_states")
            for ligne in conn.execute(f"SELECT * FROM {table} WHERE user_id = ?", (user_id,))
        ]
    finally:
        conn.close()
    await _efface(service, user_id)
    conn = sqlite3.connect(service.db_path)
    try:
        with conn:
            conn.execute("CREATE TABLE copie (donnees TEXT)")
            conn.executemany("INSERT INTO copie VALUES (?)", [(ligne,) for ligne in lignes])
        with conn:
            conn.execute("DROP TABLE copie")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()


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
