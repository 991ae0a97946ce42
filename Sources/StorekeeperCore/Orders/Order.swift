import Postgres

/// An order as stored and as the API shows it.
package struct Order: Codable, Sendable, Equatable {
  package var tradeNo: String
  package var userId: String
  package var productId: String
  package var quantity: Int32
  var price: String
  var currency: String
  var amount: String
  package var appAccountToken: String
  var tradeStatus: TradeStatus
  var closeReason: CloseReason?
  var origin: OrderOrigin
  var transactionId: String?
  var environment: String?
  var verification: VerificationState?
  var createdAt: String
  var expiresAt: String
  var paidAt: String?
  var closedAt: String?
  package var store: OrderStore = .appStore
  /// For a Google Play order: what the app passes to `setObfuscatedAccountId` (the order's
  /// `app_account_token`, 36 characters, unique per order); a purchase carrying it pays this
  /// order and no other.
  package var obfuscatedAccountId: String? { store == .googlePlay ? appAccountToken : nil }
  /// The placement and offering the order named when it was created (`order_offerings`), with
  /// the experiment variant when one assigned it; nil when it named none, and on reads that
  /// do not join `order_offerings` (settlement's).
  package var shown: OfferingShown? = nil

  enum CodingKeys: String, CodingKey {
    case tradeNo = "trade_no"
    case userId = "user_id"
    case productId = "product_id"
    case quantity, price
    case currency, amount
    case appAccountToken = "app_account_token"
    case tradeStatus = "trade_status"
    case closeReason = "close_reason"
    case origin
    case transactionId = "transaction_id"
    case environment
    case verification
    case createdAt = "created_at"
    case expiresAt = "expires_at"
    case paidAt = "paid_at"
    case closedAt = "closed_at"
    case store
    case obfuscatedAccountId = "obfuscated_account_id"
    case placement, offering, experiment, variant
  }

  package func encode(to encoder: any Encoder) throws {
    var c = encoder.container(keyedBy: CodingKeys.self)
    try c.encode(tradeNo, forKey: .tradeNo)
    try c.encode(userId, forKey: .userId)
    try c.encode(productId, forKey: .productId)
    try c.encode(quantity, forKey: .quantity)
    try c.encode(price, forKey: .price)
    try c.encode(currency, forKey: .currency)
    try c.encode(amount, forKey: .amount)
    try c.encode(appAccountToken, forKey: .appAccountToken)
    try c.encode(tradeStatus, forKey: .tradeStatus)
    try c.encodeIfPresent(closeReason, forKey: .closeReason)
    try c.encode(origin, forKey: .origin)
    try c.encodeIfPresent(transactionId, forKey: .transactionId)
    try c.encodeIfPresent(environment, forKey: .environment)
    try c.encodeIfPresent(verification, forKey: .verification)
    try c.encode(createdAt, forKey: .createdAt)
    try c.encode(expiresAt, forKey: .expiresAt)
    try c.encodeIfPresent(paidAt, forKey: .paidAt)
    try c.encodeIfPresent(closedAt, forKey: .closedAt)
    try c.encode(store, forKey: .store)
    try c.encodeIfPresent(obfuscatedAccountId, forKey: .obfuscatedAccountId)
    try c.encodeIfPresent(shown?.placementId, forKey: .placement)
    try c.encodeIfPresent(shown?.offeringId, forKey: .offering)
    try c.encodeIfPresent(shown?.experimentId, forKey: .experiment)
    try c.encodeIfPresent(shown?.variant, forKey: .variant)
  }

  /// The select list that `init(row:)` reads, built once (it is on every order query).
  static let columns = columns(qualifiedBy: "")
  /// The same, with columns qualified by `o.`.
  static let columnsOfO = columns(qualifiedBy: "o.")

  private static func columns(qualifiedBy prefix: String) -> String {
    """
    \(prefix)trade_no, \(prefix)user_id, \(prefix)product_id, \(prefix)quantity,
    \(prefix)unit_price::text AS price, \(prefix)currency, \(prefix)amount::text AS amount,
    \(prefix)app_account_token::text AS app_account_token, \(prefix)trade_status,
    \(prefix)close_reason, \(prefix)origin, \(prefix)transaction_id, \(prefix)environment,
    \(prefix)verification, \(prefix)store, \(SQLTime.rfc3339("\(prefix)created_at", as: "created_at")),
    \(SQLTime.rfc3339("\(prefix)expires_at", as: "expires_at")),
    \(SQLTime.rfc3339("\(prefix)paid_at", as: "paid_at")),
    \(SQLTime.rfc3339("\(prefix)closed_at", as: "closed_at"))
    """
  }
}

extension Order {
  // Declared here so that the memberwise initializer stays available.
  package init(from decoder: any Decoder) throws {
    let c = try decoder.container(keyedBy: CodingKeys.self)
    tradeNo = try c.decode(String.self, forKey: .tradeNo)
    userId = try c.decode(String.self, forKey: .userId)
    productId = try c.decode(String.self, forKey: .productId)
    quantity = try c.decode(Int32.self, forKey: .quantity)
    price = try c.decode(String.self, forKey: .price)
    currency = try c.decode(String.self, forKey: .currency)
    amount = try c.decode(String.self, forKey: .amount)
    appAccountToken = try c.decode(String.self, forKey: .appAccountToken)
    tradeStatus = try c.decode(TradeStatus.self, forKey: .tradeStatus)
    closeReason = try c.decodeIfPresent(CloseReason.self, forKey: .closeReason)
    origin = try c.decode(OrderOrigin.self, forKey: .origin)
    transactionId = try c.decodeIfPresent(String.self, forKey: .transactionId)
    environment = try c.decodeIfPresent(String.self, forKey: .environment)
    verification = try c.decodeIfPresent(VerificationState.self, forKey: .verification)
    createdAt = try c.decode(String.self, forKey: .createdAt)
    expiresAt = try c.decode(String.self, forKey: .expiresAt)
    paidAt = try c.decodeIfPresent(String.self, forKey: .paidAt)
    closedAt = try c.decodeIfPresent(String.self, forKey: .closedAt)
    store = try c.decodeIfPresent(OrderStore.self, forKey: .store) ?? .appStore
    if let placement = try c.decodeIfPresent(String.self, forKey: .placement),
      let offering = try c.decodeIfPresent(String.self, forKey: .offering)
    {
      shown = OfferingShown(
        placementId: placement, offeringId: offering,
        experimentId: try c.decodeIfPresent(String.self, forKey: .experiment),
        variant: try c.decodeIfPresent(String.self, forKey: .variant))
    }
  }

  init(row: PostgresRow) throws {
    tradeNo = try row.decode("trade_no")
    userId = try row.decode("user_id")
    productId = try row.decode("product_id")
    quantity = try row.decode("quantity")
    price = try row.decode("price")
    currency = try row.decode("currency")
    amount = try row.decode("amount")
    appAccountToken = try row.decode("app_account_token")
    tradeStatus = try row.decode("trade_status")
    closeReason = try row.decodeIfPresent("close_reason")
    origin = try row.decode("origin")
    transactionId = try row.decodeIfPresent("transaction_id")
    environment = try row.decodeIfPresent("environment")
    verification = try row.decodeIfPresent("verification")
    createdAt = try row.decode("created_at")
    expiresAt = try row.decode("expires_at")
    paidAt = try row.decodeIfPresent("paid_at")
    closedAt = try row.decodeIfPresent("closed_at")
    store = try row.decode("store")
  }
}
