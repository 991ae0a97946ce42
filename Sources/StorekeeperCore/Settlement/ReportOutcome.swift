import Postgres

/// What became of a report (`trade_reports.outcome`).
package enum ReportOutcome: String, Codable, Sendable, PostgresEnum {
  /// Recorded, waiting for an outcome (reserved by the schema for reports not yet verified).
  case received
  /// Its payment settled the order (now or by an earlier report).
  case settled
  /// Waiting on Apple; the retry worker owns it until `give_up_at`.
  case pending
  /// Apple said the proof is not genuine.
  case invalid
  /// The proof is genuine but does not pay this order; `outcome_code` says why.
  case rejected
  /// A `TRADE_CLOSED` report that closed the order.
  case closed
  /// A `TRADE_CLOSED` report about an order already closed.
  case unchanged
  /// The store could not be asked within the retry window, or (a Google restore,
  /// `client_gone`) its client left before Google answered.
  case gaveUp = "gave_up"
}
