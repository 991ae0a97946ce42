import Postgres

/// One spend or backend grant as `wallet_operations` keeps it, with the credits a spend used.
package struct WalletOperation: Encodable, Sendable {
  package var id: Int64
  var userId: String
  var asset: String
  var kind: WalletRequest.Kind
  var amount: Int64
  var environment: String?
  var reason: String
  var reference: String?
  var caller: String
  var idempotencyKey: String
  package var balanceAfter: Int64
  var createdAt: String
  /// For a spend, the credits it used, oldest first (first in, first out).
  var lots: [LotUse] = []

  enum CodingKeys: String, CodingKey {
    case id
    case userId = "user_id"
    case asset, kind, amount, environment, reason, reference
    case balanceAfter = "balance"
    case createdAt = "created_at"
    case lots
  }

  package func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: CodingKeys.self)
    try container.encode(id, forKey: .id)
    try container.encode(userId, forKey: .userId)
    try container.encode(asset, forKey: .asset)
    try container.encode(kind.rawValue, forKey: .kind)
    try container.encode(amount, forKey: .amount)
    try container.encodeIfPresent(environment, forKey: .environment)
    try container.encode(reason, forKey: .reason)
    try container.encodeIfPresent(reference, forKey: .reference)
    try container.encode(balanceAfter, forKey: .balanceAfter)
    try container.encode(createdAt, forKey: .createdAt)
    if kind == .spend { try container.encode(lots, forKey: .lots) }
  }

  static let columns = """
    id, user_id, asset, kind, amount, environment, reason, reference, caller, idempotency_key,
    balance_after, \(SQLTime.rfc3339("created_at"))
    """

  init(row: PostgresRow) throws {
    id = try row.decode("id")
    userId = try row.decode("user_id")
    asset = try row.decode("asset")
    kind = try row.decode("kind")
    amount = try row.decode("amount")
    environment = try row.decodeIfPresent("environment")
    reason = try row.decode("reason")
    reference = try row.decodeIfPresent("reference")
    caller = try row.decode("caller")
    idempotencyKey = try row.decode("idempotency_key")
    balanceAfter = try row.decode("balance_after")
    createdAt = try row.decode("created_at")
  }

  /// Whether `request` asks for exactly this operation (a retry), whoever sends it. Text is
  /// compared byte for byte, as PostgreSQL stored it: Swift's `==` holds canonically
  /// equivalent strings equal ("café" precomposed and with a combining accent), and a request
  /// that differs from the stored one in any byte is another request, not a retry.
  func matches(_ request: WalletRequest) -> Bool {
    kind == request.kind && amount == request.amount && Self.same(asset, request.asset)
      && Self.same(reason, request.reason) && Self.same(reference, request.reference)
      && (kind == .spend || Self.same(environment, request.environment))
  }

  private static func same(_ a: String?, _ b: String?) -> Bool {
    switch (a, b) {
    case (nil, nil): return true
    case (let a?, let b?): return a.utf8.elementsEqual(b.utf8)
    default: return false
    }
  }
}
