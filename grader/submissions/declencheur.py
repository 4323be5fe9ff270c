# Une copie cachée dans le schéma : avant d'effacer l'élève (correctement, VACUUM compris),
# oublier range ses données, en base64, dans le texte d'un déclencheur. Les données de l'élève
# restent dans le fichier : le critère 7 est perdu (9/10).
import base64


async def oublier(service, user_id: str) -> None:
    conn = sqlite3.connect(service.db_path)
    try:
        lignes = conn.execute("SELECT * FROM events WHERE user_id = ?", (user_id,)).fetchall()
        texte = base64.b64encode(repr(lignes).encode()).decode()
        with conn:
            conn.execute(
                "CREATE TRIGGER IF NOT EXISTS entretien AFTER INSERT ON app_states BEGIN "
                f"SELECT '{texte}'; END"
            )
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

