import Foundation
import Postgres
import StorekeeperTestSupport
import Testing

@testable import StorekeeperCore

/// What a receiver's answer asks of the queue: `410 Gone` disables its endpoint at once, and a
/// 429's or 503's `Retry-After` holds the next attempt back, capped and within the window.
@Suite(.database) struct WebhookReceiverAnswerTests {
  static func answered(_ status: Int, retryAfterMs: Int64? = nil) -> WebhookQueue.Result {
    WebhookQueue.Result(
      outcome: .httpError, statusCode: status, durationMs: 5, retryAfterMs: retryAfterMs)
  }

  /// Seconds from now (the database's clock) to the delivery's next attempt.
  static func secondsToNextAttempt(_ database: PostgresPool, _ id: Int64) async throws -> Double {
    let row = try await database.queryFirst(
      """
      SELECT extract(epoch FROM next_attempt_at - now())::float8 AS s
      FROM webhook_deliveries WHERE id = \(id)
      """)
    return try #require(try row?.decode("s", as: Double.self))
  }

  /// Makes every pending delivery due now, as if its wait had passed.
  static func makeDue(_ database: PostgresPool) async throws {
    try await database.execute(
      "UPDATE webhook_deliveries SET next_attempt_at = now() WHERE state = 'pending'")
  }

  @Test func goneDisablesTheEndpointAtOnceAndItsDeliveryWaitsForItToBeEnabled() async throws {
    try await DomainHarness.with { h in
      let settings = WebhookSettings()
      let store = WebhookStore(database: h.database, settings: settings)
      let queue = WebhookQueue(database: h.database, settings: settings, clock: .system)
      let endpoint = try await WebhookFixtures.endpoint(store)
      try await WebhookFixtures.insertEvent(h.database, user: "ann")
      let claim = try #require(try await queue.claim(endpoint: endpoint, limit: 5).first)
      // The first attempt's 410 is enough: no WEBHOOK_DISABLE_AFTER to wait for.
      let reason = try await queue.record(claim, Self.answered(410))
      #expect(reason?.contains("410 Gone") == true)
      let shown = try await store.find(endpoint)
      #expect(!shown.enabled && shown.disabledReason == reason)
      try await Self.makeDue(h.database)
      #expect(try await queue.dueEndpoints().isEmpty)
      // Disabled: later events are not queued to it; the answered one is kept, pending.
      try await WebhookFixtures.insertEvent(h.database, user: "ann")
      let states = try await h.database.query("SELECT state FROM webhook_deliveries ORDER BY id")
        .map { try $0.decode("state", as: String.self) }
      #expect(states == ["pending"])
      _ = try await store.update(
        endpoint, WebhookStore.Change(enabled: true), by: WebhookFixtures.ops)
      let again = try #require(try await queue.claim(endpoint: endpoint, limit: 5).first)
      #expect(again.id == claim.id && again.attempt == 2)
      #expect(try await store.find(endpoint).disabledReason == nil)
    }
  }

  @Test func aSecond410InFlightKeepsTheFirstReason() async throws {
    try await DomainHarness.with { h in
      let settings = WebhookSettings()
      let store = WebhookStore(database: h.database, settings: settings)
      let queue = WebhookQueue(database: h.database, settings: settings, clock: .system)
      let endpoint = try await WebhookFixtures.endpoint(store)
      try await WebhookFixtures.insertEvent(h.database, user: "ann")
      try await WebhookFixtures.insertEvent(h.database, user: "bob")
      // Two attempts in flight at once, both answered 410: the reason is the first's.
      let claims = try await queue.claim(endpoint: endpoint, limit: 5)
      #expect(claims.count == 2)
      let first = try await queue.record(claims[0], Self.answered(410))
      #expect(first != nil)
      #expect(try await queue.record(claims[1], Self.answered(410)) == first)
      #expect(try await store.find(endpoint).disabledReason == first)
    }
  }

  @Test func retryAfterHoldsTheNextAttemptBackCappedAndWithinTheWindow() async throws {
    try await DomainHarness.with { h in
      var settings = WebhookSettings()
      settings.retryBaseMs = 30_000
      let store = WebhookStore(database: h.database, settings: settings)
      let queue = WebhookQueue(database: h.database, settings: settings, clock: .system)
      let endpoint = try await WebhookFixtures.endpoint(store)
      try await WebhookFixtures.insertEvent(h.database, user: "ann")
      // Each wait is set from this process's clock and read against the database's now() in a
      // later query: the lower bounds leave a loaded machine tens of seconds between the two,
      // and still tell each wait from those it could wrongly be (1, 30, 60 or 240 s, ten days).
      // Ten minutes asked: not before them (the backoff alone would retry after 30 s).
      let first = try #require(try await queue.claim(endpoint: endpoint, limit: 1).first)
      #expect(try await queue.record(first, Self.answered(429, retryAfterMs: 600_000)) == nil)
      let asked = try await Self.secondsToNextAttempt(h.database, first.id)
      #expect(asked > 540 && asked <= 600)
      // Ten days asked: capped at the backoff's longest step, an hour.
      try await Self.makeDue(h.database)
      let second = try #require(try await queue.claim(endpoint: endpoint, limit: 1).first)
      _ = try await queue.record(second, Self.answered(503, retryAfterMs: 864_000_000))
      let capped = try await Self.secondsToNextAttempt(h.database, second.id)
      #expect(capped > 3_540 && capped <= 3_600)
      // Less than the backoff asked: the backoff (30 s doubled twice by now) stands.
      try await Self.makeDue(h.database)
      let third = try #require(try await queue.claim(endpoint: endpoint, limit: 1).first)
      _ = try await queue.record(third, Self.answered(429, retryAfterMs: 1_000))
      let backoff = try await Self.secondsToNextAttempt(h.database, third.id)
      #expect(backoff > 100 && backoff <= 120)
    }
  }

  @Test func aRetryAfterPastTheWindowGivesTheDeliveryUp() async throws {
    try await DomainHarness.with { h in
      var settings = WebhookSettings()
      settings.retryBaseMs = 1_000
      settings.retryWindowMs = 120_000
      let store = WebhookStore(database: h.database, settings: settings)
      let queue = WebhookQueue(database: h.database, settings: settings, clock: .system)
      let endpoint = try await WebhookFixtures.endpoint(store)
      try await WebhookFixtures.insertEvent(h.database, user: "ann")
      let claim = try #require(try await queue.claim(endpoint: endpoint, limit: 1).first)
      _ = try await queue.record(claim, Self.answered(503, retryAfterMs: 300_000))
      let state: String? = try await h.database.queryFirst(
        "SELECT state FROM webhook_deliveries WHERE id = \(claim.id)")?.decode("state")
      #expect(state == "failed")
      #expect(try await store.find(endpoint).enabled)
    }
  }
}
