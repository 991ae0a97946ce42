// Placeholder until the AppStore layer lands.
