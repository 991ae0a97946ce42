import Postgres

/// What kind of record an audit row's `target_id` names.
enum AuditTargetType: String, Codable, Sendable, CaseIterable, PostgresEnum {
  /// A product id.
  case product
  /// An Apple transaction id.
  case transaction
  /// A webhook endpoint's id.
  case webhookEndpoint = "webhook_endpoint"
  /// A user id.
  case user
  /// An offering, a placement, an experiment (issue 27).
  case offering
  case placement
  case experiment
  /// A currency rate, as `reporting/currency/valid_from` (`USD/EUR/2026-05-01`).
  case currencyRate = "currency_rate"
}
