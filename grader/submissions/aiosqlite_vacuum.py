import aiosqlite


async def oublier(service, user_id: str) -> None:
    """Efface l'élève avec aiosqlite (async with ferme la connexion), puis réécrit le fichier
    et vide le -wal."""
    async with aiosqlite.connect(service.db_path) as db:
        await db.execute("PRAGMA foreign_keys = ON")
        await db.execute("DELETE FROM sessions WHERE app_name = ? AND user_id = ?",
                         (APP_NAME, user_id))
        await db.execute("DELETE FROM user_states WHERE app_name = ? AND user_id = ?",
                         (APP_NAME, user_id))
        await db.commit()
        await db.execute("VACUUM")
        await db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
