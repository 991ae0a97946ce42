/// Why the fake's state refused a change.
enum FakeStoreError: Error, Sendable, Equatable {
  case unknownTransaction(String)
  case notAutoRenewable(String)
  case notRestorable(String)
}
