/// What Storekeeper knows of a signed-in user, read only when a rule asks (`UserFactsReader`).
package struct UserFacts: Sendable, Equatable {
  /// Whether Storekeeper has any record of them: an order of any state, or an event.
  package var isKnown: Bool
  /// Whether an order of theirs was ever paid (even if refunded since).
  package var hasPaid: Bool
  /// The entitlements they hold now.
  package var entitlements: Set<String>
  /// Their balances by asset; an asset not listed is 0.
  package var balances: [String: Int64]

  package init(
    isKnown: Bool, hasPaid: Bool, entitlements: Set<String> = [], balances: [String: Int64] = [:]
  ) {
    self.isKnown = isKnown
    self.hasPaid = hasPaid
    self.entitlements = entitlements
    self.balances = balances
  }

  /// A user with no record at all.
  package static let unknown = UserFacts(isKnown: false, hasPaid: false)
}
