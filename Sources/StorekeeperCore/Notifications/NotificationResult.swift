import Postgres

/// What applying a notification came to, as `apple_notifications.result` records it for admins
/// (beside `state`). A `failed` notification's result is its error's text instead, so the
/// column is read back as text; these are the values Storekeeper writes.
package enum NotificationResult: String, Sendable, CaseIterable, PostgresEnum {
  // `unhandled`: a type Storekeeper does not know.
  case unknownType = "unknown_type"

  // `deferred`: why it waits.
  /// The transaction it is about has not been seen yet.
  case transactionUnknown = "transaction_unknown"
  /// The transaction is known but pays no order yet (a legacy receipt posted without a user).
  case transactionHasNoOrder = "transaction_has_no_order"
  /// A renewal whose original transaction has not been seen yet.
  case originalTransactionUnknown = "original_transaction_unknown"

  // `processed`: what it did.
  case noTransaction = "no_transaction"
  case datesUpdated = "dates_updated"
  case expired
  case gracePeriod = "grace_period"
  case billingRetry = "billing_retry"
  case listedForAdmins = "listed_for_admins"
  case test
  case noEffect = "no_effect"
  case alreadyClosed = "already_closed"
  case refunded
  /// A prorated refund of a one-time purchase took back its share; the order stays paid.
  case partiallyRefunded = "partially_refunded"
  case revoked
  case notRefunded = "not_refunded"
  case refundReversed = "refund_reversed"
  case unknownProduct = "unknown_product"
  case renewalRecorded = "renewal_recorded"
  /// ONE_TIME_CHARGE settled the order whose token the purchase carries.
  case settled
  /// ONE_TIME_CHARGE for a purchase already recorded (a report came first).
  case alreadySettled = "already_settled"
  /// ONE_TIME_CHARGE for a purchase that pays no order: not what its token's order asked for,
  /// or that order is paid already. A report of the purchase settles it as usual.
  case notSettled = "not_settled"
  /// REFUND_DECLINED: recorded, and told to the purchase's owner.
  case refundDeclined = "refund_declined"
  /// RESCIND_CONSENT: recorded in `consent_rescissions`, told to the users it names.
  case consentRescinded = "consent_rescinded"
  /// REFUND, REVOKE or REFUND_REVERSED (or DID_FAIL_TO_RENEW) that Apple signed before another
  /// of those types about the same purchase (subscription) that Storekeeper holds: Apple's
  /// later word stands, so this one changed nothing. Also a renewal notification for a period
  /// Apple refunded before it was credited: the refund stands, nothing is credited.
  case superseded
  /// DID_CHANGE_RENEWAL_STATUS: told to the subscriber's backend
  /// (`subscription.auto_renew_changed`); access is unchanged.
  case autoRenewChanged = "auto_renew_changed"
  /// A reconcile repair made the subscription active again (repairs are recorded in
  /// `reconcile_repairs`, so this one is never stored).
  case active

  /// What setting a subscription's status did, spelled as the status.
  package init(_ status: SubscriptionStatus) {
    switch status {
    case .active: self = .active
    case .expired: self = .expired
    case .gracePeriod: self = .gracePeriod
    case .billingRetry: self = .billingRetry
    }
  }
}
