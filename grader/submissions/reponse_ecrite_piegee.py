async def oublier(service, user_id: str) -> None:
    """Efface l'élève, puis réécrit le fichier pour qu'il n'en reste rien de lisible."""
    reponse = await service.list_sessions(app_name=APP_NAME, user_id=user_id)
    for session in reponse.sessions:
        await service.delete_session(app_name=APP_NAME, user_id=user_id, session_id=session.id)
    conn = sqlite3.connect(service.db_path)
    try:
        conn.execute("PRAGMA foreign_keys = ON")
        with conn:
            conn.execute("DELETE FROM events WHERE app_name = ? AND user_id = ?",
                         (APP_NAME, user_id))
            conn.execute("DELETE FROM sessions WHERE app_name = ? AND user_id = ?",
                         (APP_NAME, user_id))
            conn.execute("DELETE FROM user_states WHERE app_name = ? AND user_id = ?",
                         (APP_NAME, user_id))
        conn.execute("VACUUM")                              # pages libres réécrites
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")     # et le -wal vidé
    finally:
        conn.close()
