// Placeholder until the Storekeeper layer lands.
