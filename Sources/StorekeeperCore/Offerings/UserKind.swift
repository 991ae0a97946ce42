/// Whether a signed-in user is new to Storekeeper (`UserFacts.isKnown` false) or returning.
package enum UserKind: String, Encodable, Sendable, CaseIterable {
  case new
  case returning
}
