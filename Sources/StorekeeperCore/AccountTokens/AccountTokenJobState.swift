import Postgres

/// Where a Set App Account Token call owed to Apple stands (`app_account_token_jobs.state`).
package enum AccountTokenJobState: String, Codable, Sendable, CaseIterable, PostgresEnum {
  /// To be sent, or being sent: then `next_attempt_at` is the sender's lease.
  case pending
  /// Apple answered 200: its transactions for the purchase carry the token from now on.
  case sent
  /// Apple refused it for good (an unknown or family-shared purchase), or the retry window ran
  /// out; `last_error` says which.
  case failed
}
