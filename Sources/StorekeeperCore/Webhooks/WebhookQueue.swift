import Foundation
import Postgres

/// The delivery queue on PostgreSQL, shared by every instance. A sender claims due deliveries
/// with `FOR UPDATE SKIP LOCKED` and leases them by moving `next_attempt_at` past the longest
/// attempt: a sender killed mid-attempt leaves a lease that runs out, and the delivery is sent
/// again (at least once). Only the earliest undelivered delivery of a user for an endpoint is
/// ever sent, so one user's events reach an endpoint in sequence order while other users' flow;
/// the later ones are parked (`next_attempt_at` 'infinity') until it is finished, so they cost
/// claims nothing (`WebhookQueue+Claim.swift`, `WebhookQueue+Parking.swift`, and the trigger
/// that promotes, `Migrations/repeatable/webhook_promotion.sql`).
package struct WebhookQueue: Sendable {
  let database: PostgresPool
  package let settings: WebhookSettings
  let clock: WallClock

  package init(database: PostgresPool, settings: WebhookSettings, clock: WallClock) {
    self.database = database
    self.settings = settings
    self.clock = clock
  }

  /// A claimed delivery: what to send, where, signed with which secrets.
  package struct Claim: Sendable {
    package var id: Int64
    package var endpointId: UUID
    package var url: String
    package var secrets: [String]
    package var eventId: String
    package var body: [UInt8]
    /// This claim's attempt number: the lease token a result is recorded against.
    package var attempt: Int
    var firstAttemptMs: Int64
  }

  /// What an attempt came to.
  package enum Outcome: String, Codable, Sendable, PostgresEnum {
    case delivered
    case httpError = "http_error"
    case timeout
    case connectionFailed = "connection_failed"
  }

  package struct Result: Sendable {
    package var outcome: Outcome
    var statusCode: Int?
    var excerpt: String?
    var error: String?
    package var durationMs: Int
    /// The wait a 429 or 503 asked for with `Retry-After`: the next attempt is not sooner.
    package var retryAfterMs: Int64?

    package init(
      outcome: Outcome, statusCode: Int? = nil, excerpt: String? = nil, error: String? = nil,
      durationMs: Int, retryAfterMs: Int64? = nil
    ) {
      self.outcome = outcome
      self.statusCode = statusCode
      self.excerpt = excerpt
      self.error = error
      self.durationMs = durationMs
      self.retryAfterMs = retryAfterMs
    }

    /// `410 Gone`: the receiver wants no more deliveries (Standard Webhooks: disable the
    /// endpoint and stop sending).
    var gone: Bool { outcome == .httpError && statusCode == 410 }
  }

  /// The longest wait a receiver's `Retry-After` may impose: the backoff's own longest step,
  /// so a receiver cannot park a delivery for longer than a failure would.
  package var retryAfterCapMs: Int64 { settings.retryPolicy.capMs }

  /// The backoff's decision, pushed back to the receiver's `Retry-After` (capped); a wait that
  /// ends past the retry window gives the delivery up now, as the backoff would.
  func decision(after claim: Claim, _ result: Result, nowMs: Int64) -> RetryPolicy.Decision {
    let policy = settings.retryPolicy
    let backoff = policy.decision(
      afterAttempt: claim.attempt, firstAttemptMs: claim.firstAttemptMs, nowMs: nowMs)
    guard case .retry(let atMs) = backoff, let wait = result.retryAfterMs else { return backoff }
    let notBefore = nowMs + min(max(wait, 0), retryAfterCapMs)
    return notBefore > claim.firstAttemptMs + settings.retryWindowMs
      ? .giveUp : .retry(atMs: max(atMs, notBefore))
  }

  /// Enabled endpoints that have a due delivery, with how many are due (a hint only).
  package func dueEndpoints() async throws -> [UUID] {
    try await database.query(
      """
      SELECT w.id FROM webhook_endpoints w
      WHERE w.enabled AND w.deleted_at IS NULL AND EXISTS (
        SELECT 1 FROM webhook_deliveries d
        WHERE d.endpoint_id = w.id AND d.state = \(literal: .pending) AND d.next_attempt_at <= now())
      """
    ).map { try $0.decode("id") }
  }

  /// Records an attempt and what follows from it: delivered; retried later (not before a 429's
  /// or 503's `Retry-After`); given up (failed) once the retry window is spent; and the
  /// endpoint disabled at once by a `410 Gone`, or once it has failed for `disableAfterMs`
  /// without a success. Returns the reason when this attempt disabled it. A delivery answered
  /// 410 stays pending, so enabling the endpoint again sends it.
  /// A delivery finished (delivered or given up) promotes its user's next one, which a claim
  /// may have parked behind it (`claimQuery`): the trigger in
  /// `Migrations/repeatable/webhook_promotion.sql` does, on this state change as on any
  /// release's, so an instance of a release before parking promotes too.
  /// A sender whose lease ran out (another has claimed the delivery since) records its attempt
  /// but changes nothing else: neither the delivery nor the endpoint's health, which belongs to
  /// the attempt that holds the lease (a late failure would otherwise restart `failing_since`
  /// after a success, or disable an endpoint that is delivering).
  @discardableResult
  package func record(_ claim: Claim, _ result: Result) async throws -> String? {
    let nowMs = clock.milliseconds
    let delivered = result.outcome == .delivered
    let decision = self.decision(after: claim, result, nowMs: nowMs)
    let (state, nextMs): (WebhookDeliveryState, Int64) =
      delivered
      ? (.delivered, nowMs)
      : {
        switch decision {
        case .retry(let atMs): (.pending, atMs)
        case .giveUp: (.failed, nowMs)
        }
      }()
    let error = delivered ? nil : Self.describe(result)
    let row = try await database.queryFirst(
      """
      WITH attempt AS (
        INSERT INTO webhook_attempts (delivery_id, duration_ms, outcome, status_code,
                                      response_excerpt, error)
        VALUES (\(claim.id), \(result.durationMs), \(result.outcome), \(result.statusCode),
                \(result.excerpt), \(result.error))),
      moved AS (
        UPDATE webhook_deliveries
        SET state = \(state), last_error = \(error),
            next_attempt_at = to_timestamp(\(nextMs)::double precision / 1000),
            delivered_at = CASE WHEN \(delivered) THEN now() END
        WHERE id = \(claim.id) AND attempts = \(claim.attempt) AND state = \(literal: .pending)
        RETURNING id)
      UPDATE webhook_endpoints w
      SET failing_since = CASE WHEN \(delivered) THEN NULL ELSE coalesce(failing_since, now()) END,
          last_success_at = CASE WHEN \(delivered) THEN now() ELSE last_success_at END,
          enabled = enabled AND NOT \(result.gone) AND (\(delivered) OR coalesce(failing_since, now())
                    > now() - \(settings.disableAfterMs) * interval '1 millisecond'),
          disabled_reason = CASE
            WHEN enabled AND \(result.gone)
            THEN 'the receiver answered 410 Gone: it wants no more deliveries'
            WHEN enabled AND NOT \(delivered) AND coalesce(failing_since, now())
                 <= now() - \(settings.disableAfterMs) * interval '1 millisecond'
            THEN 'every attempt failed since ' || \(unescaped: SQLTime.text("failing_since"))
                 || ' (WEBHOOK_DISABLE_AFTER); last: ' || \(error ?? "")
            ELSE disabled_reason END
      WHERE w.id = \(claim.endpointId) AND EXISTS (SELECT 1 FROM moved)
      RETURNING (NOT enabled AND disabled_reason IS NOT NULL AND NOT \(delivered)) AS disabled,
                disabled_reason
      """)
    guard let row, try row.decode("disabled", as: Bool.self) else { return nil }
    return try row.decodeIfPresent("disabled_reason")
  }

  /// How many finished deliveries one purge deletes at most: one short statement.
  package static let purgeBatch = 1000

  /// Deletes up to `limit` finished deliveries (and their attempts) past the retention;
  /// returns how many. Pending ones are never purged.
  package func purge(limit: Int = purgeBatch) async throws -> Int {
    try await database.execute(
      """
      DELETE FROM webhook_deliveries WHERE id IN (
        SELECT id FROM webhook_deliveries
        WHERE state <> \(literal: .pending)
          AND created_at < now() - \(settings.retentionMs) * interval '1 millisecond'
        ORDER BY created_at LIMIT \(limit))
      """)
  }

  package static func describe(_ result: Result) -> String {
    switch result.outcome {
    case .delivered: "delivered"
    case .httpError: "HTTP \(result.statusCode ?? 0)"
    case .timeout: "no answer within the timeout"
    case .connectionFailed: "connection failed: \(result.error ?? "")"
    }
  }
}
