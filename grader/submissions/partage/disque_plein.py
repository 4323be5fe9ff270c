async def oublier_partage(sql, user_id):
    # Remplit le disque du serveur : une table UNLOGGED de quelques Go, faite de deux petites
    # séries croisées (aucun fichier temporaire, donc temp_file_limit ne l'arrête pas). Le
    # dossier du serveur compte dans le budget du rendu : la notation s'arrête, 0 avec la
    # raison, et rien ne s'écrit dans le /tmp de la machine.
    await sql(
        "CREATE UNLOGGED TABLE remplissage AS SELECT repeat(md5((a * b)::text), 30) AS x "
        "FROM generate_series(1, 2000) a, generate_series(1, 2000) b"
    )
