async def oublier(service, user_id: str) -> None:
    """Efface l'élève avec des requêtes paramétrées… mais compare user_id avec LIKE, pour qui
    certains caractères sont des jokers : un user_id fait de l'un d'eux désigne tout le monde."""
    conn = sqlite3.connect(service.db_path)
    try:
        conn.execute("PRAGMA foreign_keys = ON")
        with conn:
            conn.execute("DELETE FROM sessions WHERE app_name = ? AND user_id LIKE ?",
                         (APP_NAME, user_id))
            conn.execute("DELETE FROM user_states WHERE app_name = ? AND user_id LIKE ?",
                         (APP_NAME, user_id))
        conn.execute("VACUUM")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()
