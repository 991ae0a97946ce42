// Placeholder until the FakeAppStore layer lands.
