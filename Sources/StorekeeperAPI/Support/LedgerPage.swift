/// A page of a user's ledger with what they still owe: the app's own ledger and the admin's
/// answer the same shape (`entries`, `next_cursor`, `debts`).
struct LedgerPage<Entry: Encodable>: Encodable {
  var entries: [Entry]
  var nextCursor: String?
  /// What refunds could not take back and the user still owes, per asset.
  var debts: [String: Int64]

  enum CodingKeys: String, CodingKey {
    case entries
    case nextCursor = "next_cursor"
    case debts
  }
}
