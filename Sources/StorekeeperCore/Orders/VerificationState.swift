import Postgres

/// The state of an order's payment verification while it is not settled: `pending` while a
/// report waits on Apple, `failed` once the retries gave up.
enum VerificationState: String, Codable, Sendable, PostgresEnum {
  case pending
  case failed
}
