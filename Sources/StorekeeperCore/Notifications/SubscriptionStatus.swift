import Postgres

/// What Apple last said about a subscription's renewal (`subscription_states.status`).
package enum SubscriptionStatus: String, Sendable, PostgresEnum {
  case active
  case expired
  case gracePeriod = "grace_period"
  case billingRetry = "billing_retry"
}
