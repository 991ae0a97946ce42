// Placeholder until the Postgres layer lands.
