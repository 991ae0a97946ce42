// Placeholder until the HTTP layer lands.
