import Postgres

/// What an admin did, as `admin_audit.action` records it.
enum AdminAction: String, Codable, Sendable, CaseIterable, PostgresEnum {
  /// PUT of a product that did not exist.
  case productCreated = "product_created"
  /// PUT or PATCH of an existing product.
  case productUpdated = "product_updated"
  /// DELETE of a product.
  case productDeleted = "product_deleted"
  /// A purchase moved to another user.
  case purchaseTransferred = "purchase_transferred"
  /// A manual adjustment of a user's balance.
  case ledgerAdjusted = "ledger_adjusted"

  /// What the action's `target_id` names.
  var targetType: AuditTargetType {
    switch self {
    case .productCreated, .productUpdated, .productDeleted: .product
    case .purchaseTransferred: .transaction
    case .ledgerAdjusted: .user
    }
  }
}
