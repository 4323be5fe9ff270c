async def oublier(service, user_id: str) -> None:
    """Efface l'élève et réécrit le fichier avec VACUUM, mais laisse le -wal tel quel. Le service
    du tuteur garde sa connexion ouverte, donc la fermeture de celle-ci n'est pas la dernière et
    ne reporte pas le -wal dans le fichier, où les anciennes pages restent lisibles."""
    conn = sqlite3.connect(service.db_path)
    try:
        conn.execute("PRAGMA foreign_keys = ON")
        with conn:
            conn.execute("DELETE FROM sessions WHERE app_name = ? AND user_id = ?",
                         (APP_NAME, user_id))
            conn.execute("DELETE FROM user_states WHERE app_name = ? AND user_id = ?",
                         (APP_NAME, user_id))
        conn.execute("VACUUM")
    finally:
        conn.close()
