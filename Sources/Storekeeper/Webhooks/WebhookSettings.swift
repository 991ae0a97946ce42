/// The `WEBHOOK_*` settings: how deliveries are retried, bounded and given up.
struct WebhookSettings: Sendable, Equatable {
  /// `WEBHOOK_RETRY_BASE`, `WEBHOOK_RETRY_WINDOW`: the retry policy of a failed delivery.
  var retryBaseMs: Int64 = 30_000
  var retryWindowMs: Int64 = 72 * 3_600_000
  /// `WEBHOOK_TIMEOUT`: how long a receiver may take to answer one attempt.
  var timeoutMs: Int64 = 10_000
  /// `WEBHOOK_DISABLE_AFTER`: an endpoint whose attempts have all failed this long is disabled.
  var disableAfterMs: Int64 = 5 * 24 * 3_600_000
  /// `WEBHOOK_SECRET_OVERLAP`: how long a rotated-out secret still signs deliveries.
  var secretOverlapMs: Int64 = 24 * 3_600_000
  /// `WEBHOOK_MAX_ENDPOINTS`: endpoints that may exist at once.
  var maxEndpoints = 50
  /// `WEBHOOK_CONCURRENCY_PER_ENDPOINT`, `WEBHOOK_CONCURRENCY`: attempts in flight per endpoint
  /// and in all, per instance.
  var concurrencyPerEndpoint = 4
  var concurrency = 32
  /// `WEBHOOK_POLL_INTERVAL`: how often each instance looks for due deliveries.
  var pollIntervalMs: Int64 = 1_000
  /// `WEBHOOK_REPLAY_MAX`: the most events one replay may queue.
  var replayMax = 10_000
  /// `WEBHOOK_RETENTION`: delivered and failed deliveries (with their attempts) are deleted
  /// this long after they were queued.
  var retentionMs: Int64 = 30 * 24 * 3_600_000

  var retryPolicy: RetryPolicy { RetryPolicy(baseMs: retryBaseMs, windowMs: retryWindowMs) }

  /// A claimed delivery is the claimer's until this passes; then another sender (or the same
  /// one after a restart) takes it again. An attempt lasts at most the timeout (the transport
  /// enforces it) and recording it one statement; twice the timeout and 5 s cover both.
  var leaseMs: Int64 { 2 * timeoutMs + 5_000 }
}
