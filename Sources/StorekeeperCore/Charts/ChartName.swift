/// The charts `GET /admin/v1/charts/{name}` draws; each is defined in docs/CHARTS.md.
package enum ChartName: String, Sendable, CaseIterable {
  case revenue
  case newCustomers = "new_customers"
  case payers
  case refundRate = "refund_rate"
  case activeSubscriptions = "active_subscriptions"
  case activeTrials = "active_trials"
  case mrr
  case arr
  case trialConversion = "trial_conversion"
  case cohorts
  case churn
  case reactivations
  case billingRetry = "billing_retry"
  case gracePeriod = "grace_period"
  case consumptionRequests = "consumption_requests"

  /// Whether the chart counts money, which `?currency=` converts.
  package var isMoney: Bool {
    switch self {
    case .revenue, .payers, .refundRate, .mrr, .arr, .cohorts: true
    default: false
    }
  }

  /// Whether the chart samples a state at each period's close (the others count events in it).
  package var isStock: Bool {
    switch self {
    case .activeSubscriptions, .activeTrials, .mrr, .arr: true
    default: false
    }
  }
}
