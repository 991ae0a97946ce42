import Postgres

/// One Apple transaction owned by a user, as the admin API shows it.
package struct UserTransaction: Encodable, Sendable {
  var transactionId: String
  var originalTransactionId: String
  var productId: String
  var environment: String
  var quantity: Int32
  var tradeNo: String?
  var source: String
  var purchaseDate: String
  var expiresDate: String?
  var revocationDate: String?
  var userId: String?
  /// Apple's `appTransactionId` (the Apple Account's download of the app), when Apple gave it.
  var appTransactionId: String?
  /// A family member's copy of someone else's purchase (Apple's `FAMILY_SHARED`): no money.
  var familyShared: Bool

  enum CodingKeys: String, CodingKey {
    case transactionId = "transaction_id"
    case originalTransactionId = "original_transaction_id"
    case productId = "product_id"
    case environment, quantity
    case tradeNo = "trade_no"
    case source
    case purchaseDate = "purchase_date"
    case expiresDate = "expires_date"
    case revocationDate = "revocation_date"
    case userId = "user_id"
    case appTransactionId = "app_transaction_id"
    case familyShared = "family_shared"
  }

  static let columns = """
    transaction_id, original_transaction_id, product_id, environment, quantity, trade_no, source,
    \(SQLTime.rfc3339("purchase_date")), \(SQLTime.rfc3339("expires_date")),
    \(SQLTime.rfc3339("revocation_date")), user_id, app_transaction_id, family_shared
    """

  init(row: PostgresRow) throws {
    transactionId = try row.decode("transaction_id")
    originalTransactionId = try row.decode("original_transaction_id")
    productId = try row.decode("product_id")
    environment = try row.decode("environment")
    quantity = try row.decode("quantity")
    tradeNo = try row.decodeIfPresent("trade_no")
    source = try row.decode("source")
    purchaseDate = try row.decode("purchase_date")
    expiresDate = try row.decodeIfPresent("expires_date")
    revocationDate = try row.decodeIfPresent("revocation_date")
    userId = try row.decodeIfPresent("user_id")
    appTransactionId = try row.decodeIfPresent("app_transaction_id")
    familyShared = try row.decode("family_shared")
  }
}
