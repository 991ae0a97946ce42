/// Where Storekeeper's record of a subscription disagrees with Apple's current answer, in the
/// order the repairs apply. Pure, so each rule is testable without Apple or a database.
///
/// Only what decides access counts: Apple's latest transaction (known, revoked, its expiry)
/// and its renewal state. States that grant the same access are the same here: no row and
/// `active` are both "active"; `expired` and `billing_retry` both end access at the expiry
/// (the notification handling records GRACE_PERIOD_EXPIRED as `expired` where Apple's status
/// says billing retry). Apple's status only lists the latest transaction, so a refund of an
/// older period is left to notifications and their recovery.
enum SubscriptionDiscrepancy {
  static func repairs(stored: StoredSubscription, apple: AppleSubscription) -> [SubscriptionRepair]
  {
    var repairs: [SubscriptionRepair] = []
    let latest = apple.latest
    var status = stored.status
    var grace = stored.graceMs
    if let known = stored.transactions[latest.transactionId] {
      if latest.revocationDate != nil, known.revocationMs == nil {
        repairs.append(
          .revoked(latest, apple.familyShared ? .revoked : .refunded, wasExpiresMs: known.expiresMs)
        )
      } else if latest.revocationDate == nil, let revokedAt = known.revocationMs {
        repairs.append(.refundReversed(latest, wasRevocationMs: revokedAt))
      }
      if latest.expiresDate != known.expiresMs {
        repairs.append(.expiryChanged(latest, wasMs: known.expiresMs))
      }
    } else if latest.revocationDate == nil {
      // A revoked period never heard of granted nothing here: nothing to take back.
      repairs.append(.renewed(latest))
      // Recording a renewal marks the subscription active, as DID_RENEW does.
      (status, grace) = (.active, nil)
    }
    if let target = apple.state,
      !agree(stored: access(status, grace), apple: access(target.status, target.graceMs))
    {
      repairs.append(
        .stateChanged(was: status, wasGraceMs: grace, to: target.status, graceMs: target.graceMs))
    }
    return repairs
  }

  /// Expired and billing retry give the same access but have their own events
  /// (`subscription.expired`, `subscription.billing_problem`): Apple's expiry repairs a billing
  /// retry whose EXPIRED was lost. Recorded expired while Apple still retries is what
  /// GRACE_PERIOD_EXPIRED leaves (the grace ended, the retries go on): no repair, which would
  /// say the billing problem a second time.
  private static func agree(stored: Access, apple: Access) -> Bool {
    stored == apple || (stored == .expired && apple == .billingRetry)
  }

  /// A state as far as a repair is concerned: none recorded is active.
  private enum Access: Equatable {
    case active
    case expired
    case billingRetry
    case grace(Int64?)
  }

  private static func access(_ status: SubscriptionStatus?, _ grace: Int64?) -> Access {
    switch status {
    case nil, .active: .active
    case .expired: .expired
    case .billingRetry: .billingRetry
    case .gracePeriod: .grace(grace)
    }
  }
}
