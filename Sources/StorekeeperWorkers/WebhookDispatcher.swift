import Foundation
import StorekeeperCore
import StorekeeperLogging
import Synchronization

/// Sends due deliveries. Each pass (`runOnce`, on a background loop) claims work per endpoint
/// up to that endpoint's free slots and the instance's, and starts one task per delivery, so a
/// receiver that hangs holds only its own endpoint's slots, each for at most the timeout. A
/// finished attempt is recorded and wakes the loop, so the next event of that user follows at
/// once instead of at the next tick.
package final class WebhookDispatcher: Sendable {
  private let queue: WebhookQueue
  private let transport: any WebhookTransport
  private let settings: WebhookSettings
  private let clock: WallClock
  private let logger: Logger
  private let wake: @Sendable () -> Void
  private let state = Mutex(InFlight())
  /// Attempts by outcome since start (this instance's, for `/metrics`).
  private let attempts: WebhookAttemptCounts
  /// When finished deliveries were last purged (epoch ms); at most once a minute. These three
  /// are due again at once when the clock reads before them (`WallClock.isDue`).
  private let lastPurgeMs = Mutex<Int64>(0)
  /// When deleted endpoints were last looked for (epoch ms); at most once a second.
  private let lastRemovalMs = Mutex<Int64>(0)
  /// When parked deliveries left behind nothing were last woken (epoch ms): once a minute.
  private let lastWakeMs = Mutex<Int64>(0)

  private struct InFlight {
    var total = 0
    var perEndpoint: [UUID: Int] = [:]
    var tasks: [Int64: Task<Void, Never>] = [:]
  }

  package init(
    queue: WebhookQueue, transport: any WebhookTransport, clock: WallClock,
    attempts: WebhookAttemptCounts = WebhookAttemptCounts(), logger: Logger,
    wake: @escaping @Sendable () -> Void
  ) {
    self.attempts = attempts
    self.queue = queue
    self.transport = transport
    self.settings = queue.settings
    self.clock = clock
    self.logger = logger
    self.wake = wake
  }

  package func runOnce() async {
    do {
      try await purgeIfDue()
      try await removeDeletedIfDue()
      try await wakeStrandedIfDue()
      for endpoint in try await queue.dueEndpoints().shuffled() {
        let free = state.withLock { state in
          min(
            settings.concurrencyPerEndpoint - state.perEndpoint[endpoint, default: 0],
            settings.concurrency - state.total)
        }
        guard free > 0 else { continue }
        for claim in try await queue.claim(endpoint: endpoint, limit: free) { start(claim) }
      }
    } catch {
      logger.warning("webhook pass failed", ["error": .string("\(error)")])
    }
  }

  /// Purges once a minute, or on the next pass again while batches come back full: at a
  /// batch a minute, deliveries finishing faster than about 17 a second would outgrow the
  /// retention for ever. A pass still deletes one batch at most, so sending is not held up.
  private func purgeIfDue() async throws {
    guard takeTurn(lastPurgeMs, everyMs: 60_000) else { return }
    let purged = try await queue.purge()
    if purged >= WebhookQueue.purgeBatch { lastPurgeMs.withLock { $0 = 0 } }
    if purged > 0 { logger.info("finished webhook deliveries purged", ["count": .int(purged)]) }
  }

  /// Removes what is left of deleted endpoints, a batch a pass (`WebhookQueue.removeDeleted`):
  /// looked for once a second, since a pass also follows every finished attempt, and on the
  /// next pass again while batches come back full, so a long history goes in minutes while
  /// sending goes on between its batches.
  private func removeDeletedIfDue() async throws {
    guard takeTurn(lastRemovalMs, everyMs: 1_000) else { return }
    let removed = try await queue.removeDeleted()
    if removed >= WebhookQueue.removalBatch { lastRemovalMs.withLock { $0 = 0 } }
    if removed > 0 {
      logger.info("deleted webhook endpoint's deliveries removed", ["count": .int(removed)])
    }
  }

  /// The safety net under parking (`WebhookQueue.wakeStranded`): it walks every user with
  /// pending deliveries, so once a minute, not every pass; the first pass after start runs it,
  /// which wakes what an instance of the release before parking left stranded.
  private func wakeStrandedIfDue() async throws {
    guard takeTurn(lastWakeMs, everyMs: 60_000) else { return }
    let woken = try await queue.wakeStranded()
    if woken > 0 { logger.info("stranded webhook deliveries woken", ["count": .int(woken)]) }
  }

  /// Whether a housekeeping job last run at `last` is due, marking it run now if so.
  private func takeTurn(_ last: borrowing Mutex<Int64>, everyMs interval: Int64) -> Bool {
    let now = clock.milliseconds
    return last.withLock { last in
      guard WallClock.isDue(nowMs: now, lastMs: last, intervalMs: interval) else { return false }
      last = now
      return true
    }
  }

  /// Waits for the attempts in flight (each bounded by the timeout) to finish and be recorded.
  package func drain() async {
    let tasks = state.withLock { Array($0.tasks.values) }
    for task in tasks { await task.value }
  }

  private func start(_ claim: WebhookQueue.Claim) {
    state.withLock { state in
      state.total += 1
      state.perEndpoint[claim.endpointId, default: 0] += 1
      state.tasks[claim.id] = Task { await self.deliver(claim) }
    }
  }

  private func finish(_ claim: WebhookQueue.Claim) {
    state.withLock { state in
      state.total -= 1
      let left = state.perEndpoint[claim.endpointId, default: 1] - 1
      state.perEndpoint[claim.endpointId] = left > 0 ? left : nil
      state.tasks[claim.id] = nil
    }
    wake()
  }

  private func deliver(_ claim: WebhookQueue.Claim) async {
    defer { finish(claim) }
    let result = await send(claim)
    attempts.record(result.outcome)
    var metadata: [String: LogValue] = [
      "endpoint_id": .string(claim.endpointId.uuidString.lowercased()),
      "delivery_id": .int(Int(claim.id)), "event_id": .string(claim.eventId),
      "attempt": .int(claim.attempt), "outcome": .string(result.outcome.rawValue),
      "duration_ms": .int(result.durationMs),
    ]
    if let wait = result.retryAfterMs {
      metadata["retry_after_ms"] = .int(Int(min(wait, queue.retryAfterCapMs)))
    }
    do {
      if let reason = try await queue.record(claim, result) {
        logger.warning(
          "webhook endpoint disabled", metadata.merging(["reason": .string(reason)]) { $1 })
      }
    } catch {
      // The lease runs out and the delivery is sent again: at least once.
      logger.warning(
        "webhook attempt not recorded", metadata.merging(["error": .string("\(error)")]) { $1 })
      return
    }
    if result.outcome == .delivered {
      logger.debug("webhook delivered", metadata)
    } else {
      logger.info(
        "webhook attempt failed",
        metadata.merging(["error": .string(WebhookQueue.describe(result))]) { $1 })
    }
  }

  private func send(_ claim: WebhookQueue.Claim) async -> WebhookQueue.Result {
    // An endpoint written under another rule (http:// while ALLOW_INSECURE_URLS=1, since
    // turned off) is not sent to in clear: the attempt fails saying why, as an unreachable
    // endpoint's does, until its URL is changed.
    if let problem = WebhookURLRule.problem(claim.url, allowInsecure: settings.allowInsecureURLs) {
      return WebhookQueue.Result(
        outcome: .connectionFailed, error: "the endpoint's URL \(problem)", durationMs: 0)
    }
    guard let url = URL(string: claim.url) else {
      return WebhookQueue.Result(
        outcome: .connectionFailed, error: "the endpoint's URL cannot be parsed", durationMs: 0)
    }
    let timestamp = clock.milliseconds / 1000
    // Two signatures of the same secret, so a receiver verifies with the library it has:
    // Stripe's scheme (Storekeeper-Signature) and Standard Webhooks (webhook-*), whose id is
    // the event's, the same on every attempt and replay, as the spec's idempotency key.
    let headers = [
      ("Content-Type", "application/json"),
      ("User-Agent", "Storekeeper-Webhooks/1"),
      ("Storekeeper-Event-Id", claim.eventId),
      (
        "Storekeeper-Signature",
        WebhookSecret.signatureHeader(
          secrets: claim.secrets, timestamp: timestamp, body: claim.body)
      ),
      ("webhook-id", claim.eventId),
      ("webhook-timestamp", String(timestamp)),
      (
        "webhook-signature",
        WebhookSecret.standardSignatureHeader(
          secrets: claim.secrets, id: claim.eventId, timestamp: timestamp, body: claim.body)
      ),
    ]
    let started = ContinuousClock.now
    let answer = await transport.post(
      url: url, body: claim.body, headers: headers, timeout: .milliseconds(settings.timeoutMs))
    let elapsed = ContinuousClock.now - started
    let durationMs = Int(
      elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000)
    switch answer {
    case .answered(let status, let body, let retryAfter):
      // RFC 9110 gives Retry-After meaning on these two (and redirects, which are failures
      // here anyway); elsewhere it is ignored.
      let wait =
        status == 429 || status == 503
        ? retryAfter.flatMap { WebhookRetryAfter.delayMs($0, nowMs: clock.milliseconds) } : nil
      return WebhookQueue.Result(
        outcome: (200...299).contains(status) ? .delivered : .httpError, statusCode: status,
        excerpt: Self.excerpt(body), durationMs: durationMs, retryAfterMs: wait)
    case .timedOut:
      return WebhookQueue.Result(outcome: .timeout, durationMs: durationMs)
    case .connectionFailed(let reason):
      return WebhookQueue.Result(
        outcome: .connectionFailed, error: Self.bounded(reason, 500), durationMs: durationMs)
    }
  }

  /// The start of an answer as text PostgreSQL can hold: at most 1,024 characters, no NUL.
  static func excerpt(_ body: [UInt8]) -> String? {
    guard !body.isEmpty else { return nil }
    return bounded(String(decoding: body.prefix(4096), as: UTF8.self), 1024)
  }

  static func bounded(_ text: String, _ limit: Int) -> String {
    var scalars = String.UnicodeScalarView()
    for scalar in text.unicodeScalars where scalar != "\u{0}" {
      guard scalars.count < limit else { break }
      scalars.append(scalar)
    }
    return String(scalars)
  }
}
