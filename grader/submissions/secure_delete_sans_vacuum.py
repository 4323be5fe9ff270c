async def oublier(service, user_id: str) -> None:
    """Efface l'élève sur une connexion en secure_delete, qui met à zéro ce qu'elle supprime :
    sans VACUUM, il suffit de vider le -wal. Les événements sont supprimés avant leurs sessions,
    sans compter sur la cascade."""
    conn = sqlite3.connect(service.db_path, isolation_level=None)
    try:
        conn.execute("PRAGMA secure_delete = ON")
        conn.execute("BEGIN IMMEDIATE")
        for table in ("events", "sessions", "user_states"):
            conn.execute(f"DELETE FROM {table} WHERE app_name = ? AND user_id = ?",
                         (APP_NAME, user_id))
        conn.execute("COMMIT")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()
