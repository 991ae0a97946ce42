/// The `WEBHOOK_*` settings: how deliveries are retried, bounded and given up.
package struct WebhookSettings: Sendable, Equatable {
  /// `WEBHOOK_RETRY_BASE`, `WEBHOOK_RETRY_WINDOW`: the retry policy of a failed delivery.
  package var retryBaseMs: Int64 = 30_000
  package var retryWindowMs: Int64 = 72 * 3_600_000
  /// `WEBHOOK_TIMEOUT`: how long a receiver may take to answer one attempt.
  package var timeoutMs: Int64 = 10_000
  /// `WEBHOOK_DISABLE_AFTER`: an endpoint whose attempts have all failed this long is disabled.
  package var disableAfterMs: Int64 = 5 * 24 * 3_600_000
  /// `WEBHOOK_SECRET_OVERLAP`: how long a rotated-out secret still signs deliveries.
  package var secretOverlapMs: Int64 = 24 * 3_600_000
  /// `WEBHOOK_MAX_ENDPOINTS`: endpoints that may exist at once.
  package var maxEndpoints = 50
  /// `WEBHOOK_CONCURRENCY_PER_ENDPOINT`, `WEBHOOK_CONCURRENCY`: attempts in flight per endpoint
  /// and in all, per instance.
  package var concurrencyPerEndpoint = 4
  package var concurrency = 32
  /// `WEBHOOK_POLL_INTERVAL`: how often each instance looks for due deliveries.
  package var pollIntervalMs: Int64 = 1_000
  /// `WEBHOOK_REPLAY_MAX`: the most events one replay may queue.
  package var replayMax = 10_000
  /// `WEBHOOK_RETENTION`: delivered and failed deliveries (with their attempts) are deleted
  /// this long after they were queued.
  package var retentionMs: Int64 = 30 * 24 * 3_600_000
  /// `ALLOW_INSECURE_URLS`: whether `http://` endpoints are sent to (`WebhookURLRule`), checked
  /// on every attempt as well as when an endpoint is written.
  package var allowInsecureURLs = false

  package init(
    retryBaseMs: Int64 = 30_000, retryWindowMs: Int64 = 72 * 3_600_000, timeoutMs: Int64 = 10_000,
    disableAfterMs: Int64 = 5 * 24 * 3_600_000, secretOverlapMs: Int64 = 24 * 3_600_000,
    maxEndpoints: Int = 50, concurrencyPerEndpoint: Int = 4, concurrency: Int = 32,
    pollIntervalMs: Int64 = 1_000, replayMax: Int = 10_000, retentionMs: Int64 = 30 * 24 * 3_600_000
  ) {
    self.retryBaseMs = retryBaseMs
    self.retryWindowMs = retryWindowMs
    self.timeoutMs = timeoutMs
    self.disableAfterMs = disableAfterMs
    self.secretOverlapMs = secretOverlapMs
    self.maxEndpoints = maxEndpoints
    self.concurrencyPerEndpoint = concurrencyPerEndpoint
    self.concurrency = concurrency
    self.pollIntervalMs = pollIntervalMs
    self.replayMax = replayMax
    self.retentionMs = retentionMs
  }

  var retryPolicy: RetryPolicy { RetryPolicy(baseMs: retryBaseMs, windowMs: retryWindowMs) }

  /// A claimed delivery is the claimer's until this passes; then another sender (or the same
  /// one after a restart) takes it again. An attempt lasts at most the timeout (the transport
  /// enforces it) and recording it one statement; twice the timeout and 5 s cover both.
  var leaseMs: Int64 { 2 * timeoutMs + 5_000 }
}
