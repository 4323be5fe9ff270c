async def oublier(service, user_id: str) -> None:
    """Efface l'élève, puis lance VACUUM sur une seconde connexion… avant d'avoir validé la
    première : sa transaction ouverte verrouille la base, et chaque appel lève « database is
    locked », le premier compris. Le commit() du finally valide bien la suppression."""
    conn = sqlite3.connect(service.db_path)
    conn.execute("PRAGMA foreign_keys = ON")
    conn.execute("DELETE FROM sessions WHERE app_name = ? AND user_id = ?", (APP_NAME, user_id))
    conn.execute("DELETE FROM user_states WHERE app_name = ? AND user_id = ?",
                 (APP_NAME, user_id))
    autre = sqlite3.connect(service.db_path, timeout=0.1)
    try:
        autre.execute("VACUUM")
        autre.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        autre.close()
        conn.commit()
        conn.close()
