import Foundation
import Postgres
import StorekeeperTestSupport
import Testing

@testable import StorekeeperCore

/// Deleting an endpoint on a real database: the admin's call only marks it, and the webhook
/// loop removes its deliveries in batches, then its row, never failing an event insert that
/// still holds the endpoint.
@Suite(.database, .serialized) struct WebhookRemovalTests {
  static func count(_ database: PostgresPool, _ query: PostgresQuery) async throws -> Int64? {
    try await database.queryFirst(query)?.decode("n")
  }

  @Test func aDeletedEndpointIsGoneAtOnceAndItsDeliveriesGoInBatchesThenItsRow() async throws {
    try await DomainHarness.with { h in
      let store = WebhookStore(database: h.database, settings: WebhookSettings())
      let queue = WebhookQueue(database: h.database, settings: WebhookSettings(), clock: .system)
      let endpoint = try await WebhookFixtures.endpoint(store)
      for user in ["ann", "bob", "cy"] {
        try await WebhookFixtures.insertEvent(h.database, user: user)
      }
      try await store.delete(endpoint, by: WebhookFixtures.ops)

      await #expect(throws: WebhookRefusal.self) { try await store.find(endpoint) }
      #expect(try await store.list().isEmpty)
      #expect(try await queue.dueEndpoints().isEmpty)
      #expect(try await queue.claim(endpoint: endpoint, limit: 10).isEmpty)
      try await WebhookFixtures.insertEvent(h.database, user: "dee")
      let deliveries: PostgresQuery =
        "SELECT count(*)::bigint AS n FROM webhook_deliveries WHERE endpoint_id = \(endpoint)"
      #expect(try await Self.count(h.database, deliveries) == 3)

      let row: PostgresQuery =
        "SELECT count(*)::bigint AS n FROM webhook_endpoints WHERE id = \(endpoint)"
      #expect(try await queue.removeDeleted(limit: 2) == 2)
      #expect(try await Self.count(h.database, row) == 1)
      #expect(try await queue.removeDeleted(limit: 2) == 1)
      #expect(try await Self.count(h.database, deliveries) == 0)
      #expect(try await Self.count(h.database, row) == 0)
    }
  }

  @Test func anEventInsertHoldingTheEndpointOutlivesItsDeletionAndRemoval() async throws {
    try await DomainHarness.with { h in
      let store = WebhookStore(database: h.database, settings: WebhookSettings())
      let queue = WebhookQueue(database: h.database, settings: WebhookSettings(), clock: .system)
      let endpoint = try await WebhookFixtures.endpoint(store)
      let row: PostgresQuery =
        "SELECT count(*)::bigint AS n FROM webhook_endpoints WHERE id = \(endpoint)"
      try await h.database.withTransaction { tx in
        // Fanned out before the deletion: holds a key-share lock on the endpoint.
        try await tx.execute(
          """
          INSERT INTO events (id, type, user_id, sequence, data, user_state)
          VALUES (gen_random_uuid(), 'balance.changed', 'ann', 1, '{}', '{}')
          """)
        // Neither the mark nor the removal waits for it, and the row outlives it.
        try await store.delete(endpoint, by: WebhookFixtures.ops)
        #expect(try await queue.removeDeleted() == 0)
        #expect(try await Self.count(h.database, row) == 1)
      }
      // Once it committed (its delivery with it), the next pass removes both.
      #expect(try await queue.removeDeleted() == 1)
      #expect(try await Self.count(h.database, row) == 0)
      // An event written after the deletion fans out to nothing and fails on nothing.
      try await WebhookFixtures.insertEvent(h.database, user: "bob")
      #expect(
        try await Self.count(h.database, "SELECT count(*)::bigint AS n FROM webhook_deliveries")
          == 0)
    }
  }
}
