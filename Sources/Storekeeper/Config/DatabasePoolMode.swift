/// `DB_POOL_MODE`: what `DATABASE_URL` leads to, and so what a session may be trusted to keep.
public enum DatabasePoolMode: String, Sendable {
  /// PostgreSQL itself, or a pooler that gives each client one server session for as long
  /// as it stays connected (PgBouncer's `pool_mode = session`).
  case session
  /// A pooler that hands the server session to another client after every transaction
  /// (PgBouncer's `pool_mode = transaction`): nothing may outlive a transaction — no prepared
  /// statement, `LISTEN`, session advisory lock or plain `SET`.
  case transaction
}
