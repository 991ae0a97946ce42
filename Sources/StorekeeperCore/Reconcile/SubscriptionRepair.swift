import AppStore

/// One way Storekeeper's record of a subscription disagrees with Apple, and what applying
/// Apple's truth does: the same effect the lost notification would have had.
package enum SubscriptionRepair: Sendable, Equatable {
  /// A period Storekeeper never heard of (DID_RENEW, SUBSCRIBED, OFFER_REDEEMED lost).
  case renewed(VerifiedTransaction)
  /// Refunded or revoked at Apple, still granted here (REFUND, REVOKE lost).
  case revoked(VerifiedTransaction, OrderEventReason, wasExpiresMs: Int64?)
  /// Refund reversed at Apple, still revoked here (REFUND_REVERSED lost).
  case refundReversed(VerifiedTransaction, wasRevocationMs: Int64)
  /// The period ends at another time (EXPIRED cutting it short, RENEWAL_EXTENDED lost).
  case expiryChanged(VerifiedTransaction, wasMs: Int64?)
  /// Grace period, billing retry or expiry that Storekeeper does not hold (DID_FAIL_TO_RENEW,
  /// GRACE_PERIOD_EXPIRED, EXPIRED lost).
  case stateChanged(
    was: SubscriptionStatus?, wasGraceMs: Int64?, to: SubscriptionStatus, graceMs: Int64?)

  package var kind: String {
    switch self {
    case .renewed: "renewed"
    case .revoked: "revoked"
    case .refundReversed: "refund_reversed"
    case .expiryChanged: "expiry_changed"
    case .stateChanged: "state_changed"
    }
  }

  var transactionId: String? {
    switch self {
    case .renewed(let t), .revoked(let t, _, _), .refundReversed(let t, _),
      .expiryChanged(let t, _):
      t.transactionId
    case .stateChanged: nil
    }
  }

  /// What Storekeeper held, for the record.
  package var was: JSONValue {
    switch self {
    case .renewed: .object(["transaction": .string("unknown")])
    case .revoked(_, _, let expires):
      .object(["revoked": .bool(false), "expires_at": EventTime.value(ms: expires)])
    case .refundReversed(_, let at): .object(["revoked_at": EventTime.value(ms: at)])
    case .expiryChanged(_, let was): .object(["expires_at": EventTime.value(ms: was)])
    case .stateChanged(let status, let grace, _, _):
      .object([
        "status": status.map { .string($0.rawValue) } ?? .null,
        "grace_expires_at": EventTime.value(ms: grace),
      ])
    }
  }

  /// What it became.
  package var became: JSONValue {
    switch self {
    case .renewed(let t):
      .object([
        "transaction_id": .string(t.transactionId), "product_id": .string(t.productId),
        "expires_at": EventTime.value(ms: t.expiresDate),
      ])
    case .revoked(let t, let reason, _):
      .object([
        "revoked_at": EventTime.value(ms: t.revocationDate), "reason": .string(reason.rawValue),
      ])
    case .refundReversed: .object(["revoked": .bool(false)])
    case .expiryChanged(let t, _): .object(["expires_at": EventTime.value(ms: t.expiresDate)])
    case .stateChanged(_, _, let status, let grace):
      .object(["status": .string(status.rawValue), "grace_expires_at": EventTime.value(ms: grace)])
    }
  }
}
