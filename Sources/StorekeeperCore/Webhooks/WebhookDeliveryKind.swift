import Postgres

/// Why a delivery was queued (`webhook_deliveries.kind`).
package enum WebhookDeliveryKind: String, Codable, Sendable, CaseIterable, PostgresEnum {
  /// The fan-out trigger queued it for a new event (the column's default).
  case event
  /// An admin replayed an earlier event to the endpoint.
  case replay
  /// An admin sent the endpoint a `webhook.test` event.
  case test
}
