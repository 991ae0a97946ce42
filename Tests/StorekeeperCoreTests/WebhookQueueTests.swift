import Foundation
import Postgres
import StorekeeperLogging
import StorekeeperTestSupport
import Testing

@testable import StorekeeperCore

/// The delivery queue on a real database: the fan-out trigger, the order rule per user and
/// endpoint, leases, give-up and automatic disabling.
@Suite(.database) struct WebhookQueueTests {
  static let ops = WebhookFixtures.ops

  @discardableResult
  static func insertEvent(_ database: PostgresPool, user: String, type: String = "balance.changed")
    async throws -> Int64
  { try await WebhookFixtures.insertEvent(database, user: user, type: type) }

  static func endpoint(_ store: WebhookStore, types: [String] = ["*"], enabled: Bool = true)
    async throws -> UUID
  { try await WebhookFixtures.endpoint(store, types: types, enabled: enabled) }

  /// A top-level field of a delivery's body.
  static func value(_ body: [UInt8], _ key: String) throws -> JSONValue? {
    guard case .object(let fields) = try JSONCoding.decode(JSONValue.self, from: body) else {
      return nil
    }
    return fields[key]
  }

  static func succeeded(_ ms: Int = 5) -> WebhookQueue.Result {
    WebhookQueue.Result(outcome: .delivered, statusCode: 200, durationMs: ms)
  }

  static func failed() -> WebhookQueue.Result {
    WebhookQueue.Result(outcome: .httpError, statusCode: 500, excerpt: "no", durationMs: 5)
  }

  @Test func eachEventIsQueuedToEveryEnabledEndpointWhoseFilterTakesIt() async throws {
    try await DomainHarness.with { h in
      let store = WebhookStore(database: h.database, settings: WebhookSettings())
      let all = try await Self.endpoint(store)
      let paid = try await Self.endpoint(store, types: ["order.paid"])
      let off = try await Self.endpoint(store, enabled: false)
      try await Self.insertEvent(h.database, user: "ann", type: "order.paid")
      try await Self.insertEvent(h.database, user: "ann", type: "balance.changed")
      let rows = try await h.database.query(
        "SELECT endpoint_id, sequence FROM webhook_deliveries ORDER BY sequence, endpoint_id")
      var queued: [UUID: [Int64]] = [:]
      for row in rows {
        queued[try row.decode("endpoint_id"), default: []].append(try row.decode("sequence"))
      }
      #expect(queued[all] == [1, 2])
      #expect(queued[paid] == [1])
      #expect(queued[off] == nil)
      // An event whose transaction rolls back leaves no delivery either.
      await #expect(throws: (any Error).self) {
        try await h.database.withTransaction { tx in
          try await tx.execute(
            """
            INSERT INTO events (id, type, user_id, sequence, data, user_state)
            VALUES (gen_random_uuid(), 'order.paid', 'bob', 1, '{}', '{}')
            """)
          throw WebhookRefusal.endpointNotFound("rollback")
        }
      }
      let count: Int64? = try await h.database.queryFirst(
        "SELECT count(*)::bigint AS n FROM webhook_deliveries")?.decode("n")
      #expect(count == 3)
    }
  }

  @Test func onlyTheEarliestUndeliveredEventOfAUserIsDueAndOtherUsersAreNotHeldUp() async throws {
    try await DomainHarness.with { h in
      var settings = WebhookSettings()
      settings.retryBaseMs = 60_000
      let store = WebhookStore(database: h.database, settings: settings)
      let queue = WebhookQueue(database: h.database, settings: settings, clock: .system)
      let endpoint = try await Self.endpoint(store)
      for _ in 0..<3 { try await Self.insertEvent(h.database, user: "ann") }
      try await Self.insertEvent(h.database, user: "bob")
      let first = try await queue.claim(endpoint: endpoint, limit: 10)
      #expect(first.count == 2)
      // Claimed work is leased: nobody else gets it, nor ann's next event, meanwhile.
      #expect(try await queue.claim(endpoint: endpoint, limit: 10).isEmpty)
      let ann = try #require(
        try first.first { try Self.value($0.body, "user_id") == .string("ann") })
      let bob = try #require(first.first { $0.id != ann.id })
      try await queue.record(bob, Self.succeeded())
      try await queue.record(ann, Self.failed())
      // ann's first failed and waits a minute: her second is still not due.
      #expect(try await queue.claim(endpoint: endpoint, limit: 10).isEmpty)
      try await h.database.execute(
        "UPDATE webhook_deliveries SET next_attempt_at = now() WHERE id = \(ann.id)")
      let again = try await queue.claim(endpoint: endpoint, limit: 10)
      #expect(again.map(\.id) == [ann.id] && again.first?.attempt == 2)
      try await queue.record(try #require(again.first), Self.succeeded())
      let second = try await queue.claim(endpoint: endpoint, limit: 10)
      #expect(second.count == 1)
      let body = try #require(second.first).body
      #expect(try Self.value(body, "sequence") == .number("2"))
      #expect(try Self.value(body, "user_id") == .string("ann"))
    }
  }

  @Test func anExpiredLeaseIsClaimedAgainAndTheLateResultChangesNothing() async throws {
    try await DomainHarness.with { h in
      let settings = WebhookSettings()
      let store = WebhookStore(database: h.database, settings: settings)
      let queue = WebhookQueue(database: h.database, settings: settings, clock: .system)
      let endpoint = try await Self.endpoint(store)
      try await Self.insertEvent(h.database, user: "ann")
      let lost = try #require(try await queue.claim(endpoint: endpoint, limit: 1).first)
      // The sender died: its lease runs out.
      try await h.database.execute("UPDATE webhook_deliveries SET next_attempt_at = now()")
      let retaken = try #require(try await queue.claim(endpoint: endpoint, limit: 1).first)
      #expect(retaken.id == lost.id && retaken.attempt == lost.attempt + 1)
      try await queue.record(retaken, Self.succeeded())
      // The first sender comes back late with a failure: recorded as an attempt, no effect.
      try await queue.record(lost, Self.failed())
      let row = try await h.database.queryFirst(
        """
        SELECT state, (SELECT count(*)::bigint FROM webhook_attempts) AS attempts
        FROM webhook_deliveries
        """)
      #expect(try row?.decode("state", as: String.self) == "delivered")
      #expect(try row?.decode("attempts", as: Int64.self) == 2)
      // Nor the endpoint's health: the success it last had stands.
      let shown = try await store.find(endpoint)
      #expect(shown.enabled && shown.failingSince == nil && shown.lastSuccessAt != nil)
    }
  }

  @Test func aDeliveryIsGivenUpAfterTheWindowAndTheEndpointDisabledAfterFailingLongEnough()
    async throws
  {
    try await DomainHarness.with { h in
      var settings = WebhookSettings()
      settings.retryBaseMs = 1_000
      // Shorter than the base: the next attempt falls past the window whatever the clock reads
      // (equal to the base, it would depend on whether a millisecond passed since the claim).
      settings.retryWindowMs = 500
      settings.disableAfterMs = 60_000
      let store = WebhookStore(database: h.database, settings: settings)
      let queue = WebhookQueue(database: h.database, settings: settings, clock: .system)
      let endpoint = try await Self.endpoint(store)
      try await Self.insertEvent(h.database, user: "ann")
      try await Self.insertEvent(h.database, user: "ann")
      let first = try #require(try await queue.claim(endpoint: endpoint, limit: 5).first)
      #expect(try await queue.record(first, Self.failed()) == nil)
      // Given up at once (the next attempt would fall past the window): ann's queue moves on.
      let next = try #require(try await queue.claim(endpoint: endpoint, limit: 5).first)
      #expect(next.id != first.id)
      // Failing for longer than WEBHOOK_DISABLE_AFTER disables the endpoint, saying why.
      try await h.database.execute(
        "UPDATE webhook_endpoints SET failing_since = now() - interval '2 minutes'")
      let reason = try await queue.record(next, Self.failed())
      #expect(reason?.contains("WEBHOOK_DISABLE_AFTER") == true)
      let shown = try await store.find(endpoint)
      #expect(!shown.enabled && shown.disabledReason == reason)
      #expect(try await queue.dueEndpoints().isEmpty)
      let states = try await h.database.query("SELECT state FROM webhook_deliveries ORDER BY id")
        .map { try $0.decode("state", as: String.self) }
      #expect(states == ["failed", "failed"])
    }
  }
}

extension WebhookQueueTests {
  @Test func finishedDeliveriesArePurgedAfterTheRetentionAndPendingOnesNever() async throws {
    try await DomainHarness.with { h in
      var settings = WebhookSettings()
      settings.retentionMs = 3_600_000
      let store = WebhookStore(database: h.database, settings: settings)
      let queue = WebhookQueue(database: h.database, settings: settings, clock: .system)
      let endpoint = try await Self.endpoint(store)
      try await Self.insertEvent(h.database, user: "ann")
      try await Self.insertEvent(h.database, user: "bob")
      let claimed = try await queue.claim(endpoint: endpoint, limit: 1)
      try await queue.record(try #require(claimed.first), Self.succeeded())
      try await h.database.execute(
        "UPDATE webhook_deliveries SET created_at = now() - interval '2 hours'")
      #expect(try await queue.purge() == 1)
      let left: Int64? = try await h.database.queryFirst(
        "SELECT count(*)::bigint AS n FROM webhook_deliveries WHERE state = 'pending'")?.decode("n")
      #expect(left == 1)
      #expect(try await queue.purge() == 0)
    }
  }
}

extension WebhookQueueTests {
  @Test func aReplayWaitsWhileALaterEventOfItsUserIsInFlight() async throws {
    try await DomainHarness.with { h in
      let store = WebhookStore(database: h.database, settings: WebhookSettings())
      let queue = WebhookQueue(database: h.database, settings: WebhookSettings(), clock: .system)
      let endpoint = try await Self.endpoint(store)
      try await Self.insertEvent(h.database, user: "ann")
      try await Self.insertEvent(h.database, user: "ann")
      let first = try #require(try await queue.claim(endpoint: endpoint, limit: 10).first)
      try await queue.record(first, Self.succeeded())
      let second = try await queue.claim(endpoint: endpoint, limit: 10)
      #expect(try second.map { try Self.value($0.body, "sequence") } == [.number("2")])
      let eventId = try #require(UUID(uuidString: first.eventId))
      #expect(try await store.replay(endpoint, .event(eventId), by: Self.ops) == 1)
      // Ann's second event is in flight: her replayed first one waits for it.
      #expect(try await queue.claim(endpoint: endpoint, limit: 10).isEmpty)
      try await queue.record(try #require(second.first), Self.succeeded())
      let replayed = try await queue.claim(endpoint: endpoint, limit: 10)
      #expect(try replayed.map { try Self.value($0.body, "sequence") } == [.number("1")])
    }
  }
}
