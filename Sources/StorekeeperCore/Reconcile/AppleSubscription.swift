import AppStore

/// One subscription as Apple's Get All Subscription Statuses reports it, its signed
/// transaction and renewal info verified.
struct AppleSubscription: Sendable, Equatable {
  var latest: VerifiedTransaction
  var status: AppStore.SubscriptionStatus
  /// Set while Apple grants a billing grace period.
  var graceMs: Int64?
  /// Family Sharing: a revocation of a shared purchase is Apple's REVOKE, not a refund.
  var familyShared: Bool
  /// When Apple signed this answer (nil if it did not say): a notification Apple signed later
  /// is a later word than this answer.
  var signedMs: Int64? = nil

  /// The renewal state the notification handling records for this status (nil: revoked, which
  /// is the transaction's revocation, not a renewal state).
  var state: (status: SubscriptionStatus, graceMs: Int64?)? {
    switch status {
    case .active: (.active, nil)
    case .expired: (.expired, nil)
    case .billingRetry: (.billingRetry, nil)
    case .billingGracePeriod: graceMs.map { (.gracePeriod, $0) } ?? (.billingRetry, nil)
    case .revoked: nil
    }
  }
}
