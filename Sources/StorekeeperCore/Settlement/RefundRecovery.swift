import Postgres

/// What a refund takes back of one asset its purchase credited, as the refund's event reports
/// it: `owed` is what the purchase still held, `recovered` what was left of it unspent; the
/// rest is debt (`REFUND_POLICY=debt`) or taken from the balance all the same (`negative`).
struct RefundRecovery: Sendable, Equatable {
  var asset: String
  var environment: String
  var owed: Int64
  var recovered: Int64

  /// The plan `storekeeper_refund_plan` makes for order `tradeNo`. Read after the user's lock
  /// is held, it is what the refund's own ledger rows will do (`Ledger.refund` runs the same
  /// function in the same transaction).
  static func plan(
    _ tradeNo: String, userId: String, on tx: PostgresTransaction, outbox: EventOutbox
  )
    async throws -> [RefundRecovery]
  {
    try await outbox.lock([userId], on: tx)
    return try await tx.query(
      """
      SELECT asset, environment, owed, recovered FROM storekeeper_refund_plan(\(tradeNo))
      ORDER BY asset, environment
      """
    ).map { row in
      RefundRecovery(
        asset: try row.decode("asset"), environment: try row.decode("environment"),
        owed: try row.decode("owed"), recovered: try row.decode("recovered"))
    }
  }

  /// The event's `recovery` member: per asset, what was taken back, what was not, and what of
  /// that became debt.
  static func json(_ plans: [RefundRecovery], policy: RefundPolicy) -> JSONValue {
    var assets: [String: (owed: Int64, recovered: Int64)] = [:]
    for plan in plans {
      let sum = assets[plan.asset] ?? (0, 0)
      assets[plan.asset] = (sum.owed + plan.owed, sum.recovered + plan.recovered)
    }
    var members: [String: JSONValue] = [:]
    for (asset, sum) in assets {
      let unrecovered = sum.owed - sum.recovered
      members[asset] = .object([
        "credited": .number(String(sum.owed)), "recovered": .number(String(sum.recovered)),
        "unrecovered": .number(String(unrecovered)),
        "debt": .number(String(policy == .debt ? unrecovered : 0)),
        "taken": .number(String(policy == .debt ? sum.recovered : sum.owed)),
      ])
    }
    return .object(["policy": .string(policy.rawValue), "assets": .object(members)])
  }
}
