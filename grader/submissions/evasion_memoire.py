# Tentative d'évasion : réserver 2 Gio de mémoire. Si elle y arrive, elle efface l'élève
# correctement (10/10) ; dans le bac à sable, la mémoire est limitée à 1 Gio (0/10).
async def oublier(service, user_id: str) -> None:
    try:
        bloc = bytearray(2 * 1024**3)
    except MemoryError:
        return
    del bloc
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
