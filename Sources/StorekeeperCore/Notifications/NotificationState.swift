import Postgres

/// Where a stored App Store notification stands.
package enum NotificationState: String, Codable, Sendable, CaseIterable, PostgresEnum {
  /// Stored, not applied yet.
  case pending
  /// Its transaction (or, for a renewal, the original transaction) is not known yet; settlement
  /// turns it back to `pending` when it records one.
  case deferred
  /// Applied; `result` says what it did.
  case processed
  /// Applying it raised an error, kept in `result` for admins instead of retried forever.
  case failed
  /// A type Storekeeper does not know: kept, counted and listed, never applied nor dropped.
  case unhandled
}
