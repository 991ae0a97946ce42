import Postgres

/// A spend or a backend grant as the API validated it.
package struct WalletRequest: Sendable, Equatable {
  package enum Kind: String, Sendable, PostgresEnum {
    case spend
    case grant
  }

  package var kind: Kind
  package var userId: String
  package var asset: String
  /// Always positive: a spend takes it, a grant gives it.
  package var amount: Int64
  package var reason: String
  package var reference: String?
  /// A grant's environment; nil for a spend, whose rows take the environment of the credits
  /// they use.
  package var environment: String?
  package var idempotencyKey: String
  /// Who asked, as `wallet_operations.caller` records it.
  package var caller: String
  package var requestId: String

  package init(
    kind: Kind, userId: String, asset: String, amount: Int64, reason: String, reference: String?,
    environment: String?, idempotencyKey: String, caller: String, requestId: String
  ) {
    self.kind = kind
    self.userId = userId
    self.asset = asset
    self.amount = amount
    self.reason = reason
    self.reference = reference
    self.environment = environment
    self.idempotencyKey = idempotencyKey
    self.caller = caller
    self.requestId = requestId
  }

  /// The most one operation may move, as for admin adjustments: far inside bigint, so no sum
  /// of operations can overflow a balance.
  package static let maxAmount: Int64 = AdjustmentRequest.maxAmount
  package static let maxReasonLength = 200
  package static let maxReferenceLength = 200
}
