async def oublier_partage(sql, user_id):
    await sql("DELETE FROM sessions WHERE app_name = $1 AND user_id = $2", APP_NAME, user_id)
    await sql("DELETE FROM user_states WHERE app_name = $1 AND user_id = $2", APP_NAME, user_id)
    await sql("VACUUM FULL events, sessions, user_states")
