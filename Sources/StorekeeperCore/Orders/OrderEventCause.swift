import Postgres

/// What made an order change, as `order_events.cause` records it.
package enum OrderEventCause: String, Codable, Sendable, PostgresEnum {
  /// `POST /v1/orders`.
  case api
  /// `POST /v1/trade-reports`.
  case report
  /// `POST /v1/receipts`.
  case receipt
  /// The background worker that retries reports waiting on Apple.
  case retryWorker = "retry_worker"
  /// An App Store Server Notification.
  case notification
  /// The expiry sweep.
  case sweeper
  /// An admin, named in the event's detail.
  case admin
  /// The reconcile pass, repairing a subscription to match Apple (run id in the detail).
  case reconcile
}
