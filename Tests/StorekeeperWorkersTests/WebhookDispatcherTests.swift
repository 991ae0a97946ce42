import Foundation
import Postgres
import StorekeeperLogging
import StorekeeperTestSupport
import Synchronization
import Testing

@testable import StorekeeperCore
@testable import StorekeeperWorkers

/// The dispatcher that sends the queue's deliveries: its purge of finished ones, and how much
/// of a receiver's answer it keeps.
@Suite(.database) struct WebhookDispatcherTests {
  /// Never called: these tests leave nothing to send.
  struct UnusedTransport: WebhookTransport {
    func post(url: URL, body: [UInt8], headers: [(String, String)], timeout: Duration) async
      -> WebhookTransportAnswer
    { .connectionFailed("unused") }
  }

  @Test func purgingKeepsUpWhileBatchesComeBackFull() async throws {
    try await DomainHarness.with { h in
      var settings = WebhookSettings()
      settings.retentionMs = 3_600_000
      let store = WebhookStore(database: h.database, settings: settings)
      let queue = WebhookQueue(database: h.database, settings: settings, clock: .system)
      _ = try await WebhookFixtures.endpoint(store)
      let finished = 2 * WebhookQueue.purgeBatch + 100
      try await h.database.execute(
        """
        WITH seq AS (
          INSERT INTO user_event_sequences (user_id, last_sequence)
          SELECT 'user-' || g, 1 FROM generate_series(1, \(finished)) g
          RETURNING user_id, last_sequence)
        INSERT INTO events (id, type, user_id, sequence, data, user_state)
        SELECT gen_random_uuid(), 'balance.changed', user_id, last_sequence, '{}', '{}' FROM seq
        """)
      try await h.database.execute(
        "UPDATE webhook_deliveries SET state = 'delivered', created_at = now() - interval '2 hours'"
      )
      let dispatcher = WebhookDispatcher(
        queue: queue, transport: UnusedTransport(), clock: .system,
        logger: Logger(label: "test", level: .critical), wake: {})
      // Three passes within a minute: a full batch makes the next pass purge again.
      for _ in 0..<3 { await dispatcher.runOnce() }
      let left: Int64? = try await h.database.queryFirst(
        "SELECT count(*)::bigint AS n FROM webhook_deliveries")?.decode("n")
      #expect(left == 0)
      // Once a batch was short, the next minute's purge waits.
      try await WebhookFixtures.insertEvent(h.database, user: "ann")
      try await h.database.execute(
        "UPDATE webhook_deliveries SET state = 'delivered', created_at = now() - interval '2 hours'"
      )
      await dispatcher.runOnce()
      let kept: Int64? = try await h.database.queryFirst(
        "SELECT count(*)::bigint AS n FROM webhook_deliveries")?.decode("n")
      #expect(kept == 1)
    }
  }

  /// A clock moved back (a new reading of PostgreSQL's clock that is earlier than the count
  /// from the last) does not hold up the dispatcher's own schedules for the length of the step.
  @Test func aClockMovedBackStillRemovesADeletedEndpointOnTheNextPass() async throws {
    try await DomainHarness.with { h in
      let clock = ManualClock()
      let store = WebhookStore(database: h.database, settings: WebhookSettings())
      let queue = WebhookQueue(
        database: h.database, settings: WebhookSettings(), clock: clock.clock)
      let dispatcher = WebhookDispatcher(
        queue: queue, transport: UnusedTransport(), clock: clock.clock,
        logger: Logger(label: "test", level: .critical), wake: {})
      await dispatcher.runOnce()
      clock.advance(by: -600)
      let endpoint = try await WebhookFixtures.endpoint(store)
      try await WebhookFixtures.insertEvent(h.database, user: "ann")
      try await store.delete(endpoint, by: WebhookFixtures.ops)
      await dispatcher.runOnce()
      let left: Int64? = try await h.database.queryFirst(
        "SELECT count(*)::bigint AS n FROM webhook_deliveries WHERE endpoint_id = \(endpoint)"
      )?.decode("n")
      #expect(left == 0)
    }
  }

  /// Counts the posts it is asked to make.
  final class CountingTransport: WebhookTransport, Sendable {
    let posts = Mutex(0)
    func post(url: URL, body: [UInt8], headers: [(String, String)], timeout: Duration) async
      -> WebhookTransportAnswer
    {
      posts.withLock { $0 += 1 }
      return .connectionFailed("counted")
    }
  }

  @Test func anHTTPEndpointIsNotSentToOnceInsecureURLsAreOff() async throws {
    try await DomainHarness.with { h in
      var settings = WebhookSettings()
      settings.allowInsecureURLs = true
      let store = WebhookStore(database: h.database, settings: settings)
      let created = try await store.create(
        url: "http://receiver.example/h", eventTypes: ["*"], enabled: true, by: WebhookFixtures.ops)
      _ = try await WebhookFixtures.insertEvent(h.database, user: "ann")
      // Started again with ALLOW_INSECURE_URLS off.
      settings.allowInsecureURLs = false
      let queue = WebhookQueue(database: h.database, settings: settings, clock: .system)
      let transport = CountingTransport()
      let dispatcher = WebhookDispatcher(
        queue: queue, transport: transport, clock: .system,
        logger: Logger(label: "test", level: .critical), wake: {})
      await dispatcher.runOnce()
      await dispatcher.drain()
      #expect(transport.posts.withLock { $0 } == 0)
      let error: String? = try await h.database.queryFirst(
        """
        SELECT a.error FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id
        WHERE d.endpoint_id = \(created.endpoint.id)::uuid
        """)?.decode("error")
      #expect(error?.contains("https") == true)
    }
  }

  @Test func anAnswerIsKeptBoundedAndWithoutNUL() throws {
    let body = Array("no\u{0}pe".utf8) + [UInt8](repeating: UInt8(ascii: "x"), count: 5000)
    let excerpt = try #require(WebhookDispatcher.excerpt(body))
    #expect(excerpt.hasPrefix("nope") && excerpt.unicodeScalars.count == 1024)
    #expect(WebhookDispatcher.excerpt([]) == nil)
    // Bytes that are not UTF-8 become replacement characters, not an error.
    #expect(WebhookDispatcher.excerpt([0xFF, 0xFE, 0x41]) == "\u{FFFD}\u{FFFD}A")
  }
}
