async def oublier(service, user_id: str) -> None:
    """Efface l'élève, réécrit le fichier, puis ferme le service que l'énoncé demande de laisser
    ouvert. C'est cette fermeture qui reporte le -wal dans le fichier, et le tuteur, qui tourne
    encore, ne peut plus s'en servir."""
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
    await service.close()
