import Postgres

/// Where one delivery of an event to an endpoint stands (`webhook_deliveries.state`).
package enum WebhookDeliveryState: String, Codable, Sendable, CaseIterable, PostgresEnum {
  /// To be sent, or being sent: then `next_attempt_at` is the sender's lease.
  case pending
  /// A 2xx came back.
  case delivered
  /// Given up once the retry window was spent.
  case failed

  /// The spelling as an SQL literal (`'pending'`), for the predicates the partial indexes on
  /// `webhook_deliveries` are written with: a bound `$n` cannot show a cached generic plan
  /// that `WHERE state = 'pending'` holds, so such a comparison names the value in its text.
  package var sqlLiteral: String { "'\(rawValue)'" }

  /// "pending, delivered or failed".
  package static var names: String {
    let all = allCases.map(\.rawValue)
    return all.dropLast().joined(separator: ", ") + " or " + all[all.count - 1]
  }
}

extension PostgresQuery.StringInterpolation {
  /// `\(literal: .pending)`: the state written into the SQL text as `'pending'`, never bound
  /// (see `sqlLiteral`). Only the enum's own spellings can go in this way.
  package mutating func appendInterpolation(literal state: WebhookDeliveryState) {
    appendLiteral(state.sqlLiteral)
  }
}
