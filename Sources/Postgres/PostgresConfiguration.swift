/// How to reach PostgreSQL and how many sessions to keep.
public struct PostgresConfiguration: Sendable {
  /// A `postgresql://` URL or a libpq conninfo string (usually `DATABASE_URL`).
  public var url: String
  /// Upper bound on open sessions; further callers wait in FIFO order.
  public var maxConnections: Int = 10
  /// How long a caller waits for a free session before `.poolTimeout`.
  public var acquireTimeout: Duration = .seconds(3)
  /// libpq's `connect_timeout`; a refused connection fails at once regardless.
  public var connectTimeoutSeconds: Int = 2
  /// Prepared statements kept per session (least recently used out); 0 sends every statement
  /// unnamed, for poolers in front of PostgreSQL that cannot keep them.
  public var statementCacheCapacity: Int = 100
  /// How long `isHealthy()` waits for `SELECT 1`.
  public var healthCheckTimeout: Duration = .seconds(2)

  public init(url: String) {
    self.url = url
  }
}
