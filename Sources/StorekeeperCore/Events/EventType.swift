import Postgres

/// What an event says happened, as `events.type` spells it. Types a writer appends name the
/// change itself; `balance.changed` and `entitlement.*` are derived by
/// `storekeeper_append_events` from the user's state before and after (Migrations/0019).
package enum EventType: String, Codable, Sendable, CaseIterable, PostgresEnum {
  /// An unpaid order (or one closed unpaid: cancelled, failed, expired) was paid.
  case orderPaid = "order.paid"
  /// An order closed: cancelled, failed, expired, refunded, revoked or transferred.
  case orderClosed = "order.closed"
  /// A refunded or revoked order is paid again because Apple reversed the refund.
  case orderReopened = "order.reopened"
  case balanceChanged = "balance.changed"
  /// The app (or its backend) spent an amount of a balance; says which credits it used.
  case balanceSpent = "balance.spent"
  /// The app's backend granted an amount (a reward, not a purchase).
  case balanceGranted = "balance.granted"
  case entitlementGranted = "entitlement.granted"
  /// The same entitlement lasts longer (a renewal, another non-renewing purchase).
  case entitlementExtended = "entitlement.extended"
  /// The same entitlement lasts less long, or rests on another product or source.
  case entitlementChanged = "entitlement.changed"
  case entitlementRevoked = "entitlement.revoked"
  /// Its time ran out (written by the change or sweep that first sees it).
  case entitlementExpired = "entitlement.expired"
  case purchaseRefunded = "purchase.refunded"
  case purchaseRefundReversed = "purchase.refund_reversed"
  /// Apple declined the customer's refund request (`REFUND_DECLINED`): nothing changes.
  case purchaseRefundDeclined = "purchase.refund_declined"
  /// Apple charged a consumable, non-consumable or non-renewing purchase (`ONE_TIME_CHARGE`).
  case purchaseCharged = "purchase.charged"
  /// A parent or guardian withdrew consent for the app (`RESCIND_CONSENT`), for each user
  /// whose purchases carry the Apple Account's `appTransactionId`.
  case consentRescinded = "consent.rescinded"
  case subscriptionRenewed = "subscription.renewed"
  case subscriptionBillingProblem = "subscription.billing_problem"
  case subscriptionExpired = "subscription.expired"
  /// The subscriber turned automatic renewal off (a voluntary cancellation: access lasts to
  /// the period's end) or on again: Apple's `DID_CHANGE_RENEWAL_STATUS`, a Google subscription
  /// read canceled, or active again after it.
  case subscriptionAutoRenewChanged = "subscription.auto_renew_changed"
  case consumptionRequested = "consumption.requested"
  /// The answer to a consumption request: sent to Apple, skipped (no consent) or failed.
  case consumptionAnswered = "consumption.answered"
  case adminTransfer = "admin.transfer"
  case adminAdjustment = "admin.adjustment"
  /// A test an admin sent to one webhook endpoint, for the pseudo-user
  /// `webhook-test:<endpoint id>` (`WebhookStore.sendTest`); never fanned out to other endpoints.
  case webhookTest = "webhook.test"
  /// A user saw an experiment's variant for the first time (`ExposureRecorder`). In the event
  /// feed only: never fanned out to webhooks (one per user per experiment would dwarf the rest).
  case experimentExposed = "experiment.exposed"
  /// An admin concluded an experiment; its winner now serves the placement. Written for the
  /// pseudo-user `experiment:<experiment id>` (`ExperimentRepository.conclude`).
  case experimentConcluded = "experiment.concluded"

  /// The order event of a transition; nil when the order's state does not change
  /// (`verification_gave_up`) or it is only being created.
  static func of(_ transition: OrderTransition) -> EventType? {
    guard transition.from != transition.to else { return nil }
    switch transition.to {
    case .tradeClosed: return .orderClosed
    case .tradeSuccess: return transition.reason == .refundReversed ? .orderReopened : .orderPaid
    case .waitBuyerPay: return nil
    }
  }
}
