/// A balance threshold: the user's balance of `asset` is at least `atLeast` and below `below`
/// (either may be left out, not both).
package struct BalanceCondition: Encodable, Sendable, Equatable {
  package var asset: String
  package var atLeast: Int64?
  package var below: Int64?

  enum CodingKeys: String, CodingKey {
    case asset
    case atLeast = "at_least"
    case below
  }

  func holds(_ balances: [String: Int64]) -> Bool {
    let balance = balances[asset] ?? 0
    if let atLeast, balance < atLeast { return false }
    if let below, balance >= below { return false }
    return true
  }
}
