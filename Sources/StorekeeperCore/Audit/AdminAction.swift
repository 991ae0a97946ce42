import Postgres

/// What an admin did, as `admin_audit.action` records it.
package enum AdminAction: String, Codable, Sendable, CaseIterable, PostgresEnum {
  /// PUT of a product that did not exist.
  case productCreated = "product_created"
  /// PUT or PATCH of an existing product.
  case productUpdated = "product_updated"
  /// DELETE of a product.
  case productDeleted = "product_deleted"
  /// A purchase moved to another user.
  case purchaseTransferred = "purchase_transferred"
  /// Webhook endpoints: created, changed, removed, secret rotated, events replayed to one, a
  /// test event sent.
  case webhookEndpointCreated = "webhook_endpoint_created"
  case webhookEndpointUpdated = "webhook_endpoint_updated"
  case webhookEndpointDeleted = "webhook_endpoint_deleted"
  case webhookSecretRotated = "webhook_secret_rotated"
  case webhookEventsReplayed = "webhook_events_replayed"
  case webhookTestSent = "webhook_test_sent"
  /// A manual adjustment of a user's balance.
  case ledgerAdjusted = "ledger_adjusted"
  /// Offerings, placements and experiments (issue 27).
  case offeringWritten = "offering_written"
  case offeringDeleted = "offering_deleted"
  case placementWritten = "placement_written"
  case placementDeleted = "placement_deleted"
  case experimentCreated = "experiment_created"
  case experimentUpdated = "experiment_updated"
  case experimentConcluded = "experiment_concluded"
  /// A currency rate written (created or changed) or removed (issue 28).
  case currencyRateWritten = "currency_rate_written"
  case currencyRateDeleted = "currency_rate_deleted"

  /// What the action's `target_id` names.
  var targetType: AuditTargetType {
    switch self {
    case .productCreated, .productUpdated, .productDeleted: .product
    case .purchaseTransferred: .transaction
    case .webhookEndpointCreated, .webhookEndpointUpdated, .webhookEndpointDeleted,
      .webhookSecretRotated, .webhookEventsReplayed, .webhookTestSent:
      .webhookEndpoint
    case .ledgerAdjusted: .user
    case .offeringWritten, .offeringDeleted: .offering
    case .placementWritten, .placementDeleted: .placement
    case .experimentCreated, .experimentUpdated, .experimentConcluded: .experiment
    case .currencyRateWritten, .currencyRateDeleted: .currencyRate
    }
  }
}
