async def oublier_partage(sql, user_id):
    # Les lignes disparaissent pour SQL, mais restent dans les pages (tuples morts) : pas de
    # VACUUM FULL.
    await sql("DELETE FROM sessions WHERE app_name = $1 AND user_id = $2", APP_NAME, user_id)
    await sql("DELETE FROM user_states WHERE app_name = $1 AND user_id = $2", APP_NAME, user_id)
