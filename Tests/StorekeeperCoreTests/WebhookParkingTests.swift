import Foundation
import Postgres
import StorekeeperTestSupport
import Testing

@testable import StorekeeperCore

/// A user whose first delivery keeps failing: the deliveries piling up behind it are parked, so
/// other users' deliveries go out and a claim reads the same few rows however long that
/// user's backlog grows (docs/decisions/0008-webhooks-ordered-per-user.md).
@Suite(.serialized, .database) struct WebhookParkingTests {
  struct Rollback: Error {}

  static func settings() -> WebhookSettings {
    var settings = WebhookSettings()
    // A failed attempt waits an hour: the head stays in backoff for the whole test.
    settings.retryBaseMs = 3_600_000
    return settings
  }

  /// `count` more events of `user` in one statement (the fan-out queues them all at once).
  static func insertEvents(_ database: PostgresPool, user: String, count: Int) async throws {
    try await database.execute(
      """
      WITH seq AS (
        INSERT INTO user_event_sequences (user_id, last_sequence) VALUES (\(user), \(count))
        ON CONFLICT (user_id)
        DO UPDATE SET last_sequence = user_event_sequences.last_sequence + \(count)
        RETURNING last_sequence)
      INSERT INTO events (id, type, user_id, sequence, data, user_state)
      SELECT gen_random_uuid(), 'balance.changed', \(user), seq.last_sequence - \(count) + g,
             '{}'::jsonb, '{}'::jsonb
      FROM seq, generate_series(1, \(count)) g
      """)
  }

  /// Ann's first delivery claimed and refused (now in backoff), then `backlog` more of hers.
  static func annBlocked(_ h: DomainHarness, backlog: Int) async throws -> (WebhookQueue, UUID) {
    let settings = Self.settings()
    let store = WebhookStore(database: h.database, settings: settings)
    let queue = WebhookQueue(database: h.database, settings: settings, clock: .system)
    let endpoint = try await WebhookFixtures.endpoint(store)
    try await WebhookFixtures.insertEvent(h.database, user: "ann")
    let head = try #require(try await queue.claim(endpoint: endpoint, limit: 4).first)
    try await queue.record(
      head, WebhookQueue.Result(outcome: .httpError, statusCode: 413, durationMs: 5))
    try await insertEvents(h.database, user: "ann", count: backlog)
    return (queue, endpoint)
  }

  static func count(_ database: PostgresPool, _ condition: PostgresQuery) async throws -> Int64 {
    var query: PostgresQuery = "SELECT count(*)::bigint AS n FROM webhook_deliveries WHERE "
    query.append(condition)
    return try await database.queryFirst(query)?.decode("n") ?? -1
  }

  /// Rows the claim statement reads from `webhook_deliveries` (every scan node's rows returned
  /// and filtered out, times its loops), from its plan run in a transaction rolled back.
  static func rowsRead(_ queue: WebhookQueue, _ h: DomainHarness, endpoint: UUID, limit: Int)
    async throws -> Int
  {
    var explain: PostgresQuery = "EXPLAIN (ANALYZE, FORMAT JSON) "
    explain.append(queue.claimQuery(endpoint: endpoint, limit: limit))
    var plan: String?
    do {
      try await h.database.withTransaction { tx in
        plan = try await tx.queryFirst(explain)?.decode("QUERY PLAN")
        throw Rollback()
      }
    } catch is Rollback {}
    let text = try #require(plan)
    return scanned(try JSONCoding.decode(JSONValue.self, from: Array(text.utf8)))
  }

  static func scanned(_ node: JSONValue) -> Int {
    switch node {
    case .array(let items): return items.map(scanned).reduce(0, +)
    case .object(let fields):
      var rows = 0
      if fields["Relation Name"] == .string("webhook_deliveries"),
        case .string(let type) = fields["Node Type"], type.contains("Scan")
      {
        let number = { (key: String) -> Double in
          if case .number(let value) = fields[key] { return Double(value) ?? 0 }
          return 0
        }
        rows = Int(
          (number("Actual Rows") + number("Rows Removed by Filter")
            + number("Rows Removed by Index Recheck")) * number("Actual Loops"))
      }
      return rows + fields.values.map(scanned).reduce(0, +)
    default: return 0
    }
  }

  @Test func anotherUsersDeliveryGoesOutWhileThousandsWaitBehindAFailingOne() async throws {
    try await DomainHarness.with { h in
      let (queue, endpoint) = try await Self.annBlocked(h, backlog: 3_000)
      try await WebhookFixtures.insertEvent(h.database, user: "bob")
      let claimed = try await queue.claim(endpoint: endpoint, limit: 4)
      #expect(claimed.count == 1)
      let bob = try #require(claimed.first)
      #expect(try WebhookQueueTests.value(bob.body, "user_id") == .string("bob"))
      try await queue.record(bob, WebhookQueue.Result(outcome: .delivered, durationMs: 5))
      // Ann's later deliveries are parked a batch a claim, out of the due index; then nothing
      // is due.
      for _ in 0..<(3_000 / WebhookQueue.parkBatch) {
        #expect(try await queue.claim(endpoint: endpoint, limit: 4).isEmpty)
      }
      #expect(try await Self.count(h.database, "next_attempt_at = 'infinity'") == 3_000)
      #expect(try await queue.dueEndpoints().isEmpty)
      #expect(try await queue.claim(endpoint: endpoint, limit: 4).isEmpty)
    }
  }

  @Test func aClaimReadsAFewRowsHoweverManyWaitBehindAFailingDelivery() async throws {
    try await DomainHarness.with { h in
      let (queue, endpoint) = try await Self.annBlocked(h, backlog: 5_000)
      // The first claims find Ann's backlog due, and park it a batch at a time.
      for _ in 0..<(5_000 / WebhookQueue.parkBatch + 2) {
        _ = try await queue.claim(endpoint: endpoint, limit: 4)
      }
      #expect(try await Self.count(h.database, "next_attempt_at = 'infinity'") == 5_000)
      for user in ["bob", "cy", "dee"] {
        try await WebhookFixtures.insertEvent(h.database, user: user)
      }
      let read = try await Self.rowsRead(queue, h, endpoint: endpoint, limit: 4)
      // Three deliveries to claim, each checked against its user's few: not Ann's 5,000.
      #expect(read < 50, "the claim read \(read) rows of webhook_deliveries")
      #expect(try await queue.claim(endpoint: endpoint, limit: 4).count == 3)
    }
  }

  @Test func theNextDeliveryIsPromotedWhenTheFailingOneIsDeliveredOrGivenUp() async throws {
    try await DomainHarness.with { h in
      let (queue, endpoint) = try await Self.annBlocked(h, backlog: 3)
      #expect(try await queue.claim(endpoint: endpoint, limit: 4).isEmpty)
      // The backoff ends; the head goes out again and is delivered: the second follows.
      try await h.database.execute(
        "UPDATE webhook_deliveries SET next_attempt_at = now() WHERE attempts > 0")
      let head = try #require(try await queue.claim(endpoint: endpoint, limit: 4).first)
      #expect(head.attempt == 2)
      try await queue.record(head, WebhookQueue.Result(outcome: .delivered, durationMs: 5))
      let second = try #require(try await queue.claim(endpoint: endpoint, limit: 4).first)
      #expect(try WebhookQueueTests.value(second.body, "sequence") == .number("2"))
      // Given up (the window is spent): the third follows all the same.
      var spent = second
      spent.firstAttemptMs -= 73 * 3_600_000
      try await queue.record(spent, WebhookQueue.Result(outcome: .timeout, durationMs: 5))
      let third = try #require(try await queue.claim(endpoint: endpoint, limit: 4).first)
      #expect(try WebhookQueueTests.value(third.body, "sequence") == .number("3"))
    }
  }

  /// The release before parking (0137, commit 24dd07e) finishing a delivery in `record`: the
  /// bare state change, promoting nothing itself.
  static func previousRelease(
    _ state: WebhookDeliveryState, _ claim: WebhookQueue.Claim
  ) -> PostgresQuery {
    """
    UPDATE webhook_deliveries
    SET state = \(state), last_error = \(state == .delivered ? nil : "HTTP 500"),
        next_attempt_at = now(), delivered_at = CASE WHEN \(state == .delivered) THEN now() END
    WHERE id = \(claim.id) AND attempts = \(claim.attempt) AND state = 'pending'
    """
  }

  @Test func aHeadFinishedByThePreviousReleasePromotesTheNext() async throws {
    try await DomainHarness.with { h in
      let (queue, endpoint) = try await Self.annBlocked(h, backlog: 3)
      #expect(try await queue.claim(endpoint: endpoint, limit: 4).isEmpty)
      #expect(try await Self.count(h.database, "next_attempt_at = 'infinity'") == 3)
      try await h.database.execute(
        "UPDATE webhook_deliveries SET next_attempt_at = now() WHERE attempts > 0")
      let head = try #require(try await queue.claim(endpoint: endpoint, limit: 4).first)
      // An instance of the release before parking (during the roll, or after a rollback)
      // delivers the head: the second is due at once, without waiting for a sweep.
      try await h.database.execute(Self.previousRelease(.delivered, head))
      #expect(try await Self.count(h.database, "next_attempt_at = 'infinity'") == 2)
      let second = try #require(try await queue.claim(endpoint: endpoint, limit: 4).first)
      #expect(try WebhookQueueTests.value(second.body, "sequence") == .number("2"))
      // It gives the second up: the third follows all the same.
      try await h.database.execute(Self.previousRelease(.failed, second))
      let third = try #require(try await queue.claim(endpoint: endpoint, limit: 4).first)
      #expect(try WebhookQueueTests.value(third.body, "sequence") == .number("3"))
      #expect(try await Self.count(h.database, "next_attempt_at = 'infinity'") == 1)
    }
  }

  @Test func creatingThePromotionWakesWhatWasFinishedBeforeIt() async throws {
    try await DomainHarness.with { h in
      // A database upgraded across 0141 before the trigger exists: every versioned file runs
      // before the definitions, and an instance of the release before parking finishes a head.
      try await h.database.execute(
        "DROP TRIGGER webhook_deliveries_promote_next ON webhook_deliveries")
      let (queue, endpoint) = try await Self.annBlocked(h, backlog: 2)
      #expect(try await queue.claim(endpoint: endpoint, limit: 4).isEmpty)
      try await h.database.execute(
        "UPDATE webhook_deliveries SET next_attempt_at = now() WHERE attempts > 0")
      let head = try #require(try await queue.claim(endpoint: endpoint, limit: 4).first)
      try await h.database.execute(Self.previousRelease(.delivered, head))
      #expect(try await queue.claim(endpoint: endpoint, limit: 4).isEmpty)
      // The file that creates the trigger wakes the stranded one, and only it.
      try await h.database.execute(
        "DELETE FROM schema_repeatables WHERE name = 'webhook_promotion.sql'")
      let migrations = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Migrations").path
      #expect(
        try await Migrator(directory: migrations, logger: DomainHarness.logger).migrate(
          h.database) == ["repeatable/webhook_promotion.sql"])
      #expect(try await Self.count(h.database, "next_attempt_at = 'infinity'") == 1)
      let second = try #require(try await queue.claim(endpoint: endpoint, limit: 4).first)
      #expect(try WebhookQueueTests.value(second.body, "sequence") == .number("2"))
      // And the trigger is back: the third follows the second.
      try await h.database.execute(Self.previousRelease(.delivered, second))
      let third = try #require(try await queue.claim(endpoint: endpoint, limit: 4).first)
      #expect(try WebhookQueueTests.value(third.body, "sequence") == .number("3"))
    }
  }

  @Test func aClaimParkingTheNextAsTheHeadIsFinishedStillSeesItPromoted() async throws {
    try await DomainHarness.with { h in
      let settings = Self.settings()
      let store = WebhookStore(database: h.database, settings: settings)
      let queue = WebhookQueue(database: h.database, settings: settings, clock: .system)
      let endpoint = try await WebhookFixtures.endpoint(store)
      try await WebhookFixtures.insertEvent(h.database, user: "ann")
      let head = try #require(try await queue.claim(endpoint: endpoint, limit: 4).first)
      // Queued while the head is in flight: due, not parked yet.
      try await WebhookFixtures.insertEvent(h.database, user: "ann")
      // A claim parks the second while it holds the head; the head's sender finishes it
      // meanwhile (the previous release's statement), waits for that claim, then promotes what
      // it parked.
      _ = try await LedgerConflictTests.interleave(
        h,
        first: { tx in
          #expect(try await tx.query(queue.claimQuery(endpoint: endpoint, limit: 4)).isEmpty)
          let parked: Int64? = try await tx.queryFirst(
            "SELECT count(*)::bigint AS n FROM webhook_deliveries WHERE next_attempt_at = 'infinity'"
          )?.decode("n")
          #expect(parked == 1)
        },
        start: { try await h.database.execute(Self.previousRelease(.delivered, head)) },
        then: { _ in })
      #expect(try await Self.count(h.database, "next_attempt_at = 'infinity'") == 0)
      let second = try #require(try await queue.claim(endpoint: endpoint, limit: 4).first)
      #expect(try WebhookQueueTests.value(second.body, "sequence") == .number("2"))
    }
  }

  @Test func aParkedDeliveryLeftBehindNothingIsWoken() async throws {
    try await DomainHarness.with { h in
      let settings = Self.settings()
      let store = WebhookStore(database: h.database, settings: settings)
      let queue = WebhookQueue(database: h.database, settings: settings, clock: .system)
      let endpoint = try await WebhookFixtures.endpoint(store)
      let first = try await WebhookFixtures.insertEvent(h.database, user: "ann")
      try await queue.record(
        try #require(try await queue.claim(endpoint: endpoint, limit: 4).first),
        WebhookQueue.Result(outcome: .delivered, durationMs: 5))
      // Ann's second goes out; its lease runs out while its sender is still at it, and her
      // first is replayed: it goes out next, and the next claim parks the second and her third
      // behind it.
      try await WebhookFixtures.insertEvent(h.database, user: "ann")
      let late = try #require(try await queue.claim(endpoint: endpoint, limit: 4).first)
      try await WebhookFixtures.insertEvent(h.database, user: "ann")
      try await h.database.execute(
        "UPDATE webhook_deliveries SET next_attempt_at = now() - interval '1 second' WHERE id = \(late.id)"
      )
      let firstId = try #require(
        try await h.database.queryFirst(
          "SELECT id FROM events WHERE user_id = 'ann' AND sequence = \(first)"
        )?.decode("id", as: UUID.self))
      #expect(try await store.replay(endpoint, .event(firstId), by: WebhookFixtures.ops) == 1)
      let replayed = try #require(try await queue.claim(endpoint: endpoint, limit: 4).first)
      #expect(try WebhookQueueTests.value(replayed.body, "sequence") == .number("1"))
      #expect(try await queue.claim(endpoint: endpoint, limit: 4).isEmpty)
      #expect(try await Self.count(h.database, "next_attempt_at = 'infinity'") == 2)
      // Both finish at once. The second's finish sees the replayed one pending (not parked);
      // the replayed one's sees the second pending and parked, waits for it, then finds it
      // finished. Neither promotes the third: the sweep wakes it.
      _ = try await LedgerConflictTests.interleave(
        h, first: { tx in try await tx.execute(Self.previousRelease(.delivered, late)) },
        start: {
          try await queue.record(replayed, WebhookQueue.Result(outcome: .delivered, durationMs: 5))
        },
        then: { _ in })
      #expect(try await Self.count(h.database, "state = 'pending'") == 1)
      #expect(try await queue.claim(endpoint: endpoint, limit: 4).isEmpty)
      #expect(try await queue.wakeStranded() == 1)
      let next = try #require(try await queue.claim(endpoint: endpoint, limit: 4).first)
      #expect(try WebhookQueueTests.value(next.body, "sequence") == .number("3"))
    }
  }
}
