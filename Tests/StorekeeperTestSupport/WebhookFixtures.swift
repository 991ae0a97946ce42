import Foundation
import Postgres
import StorekeeperCore

/// Rows the webhook tests start from.
package enum WebhookFixtures {
  package struct Missing: Error {}

  package static let ops = AdminActor(name: "ops", requestId: "req-1", clientAddress: "192.0.2.7")

  /// An event as the domain's writers insert it: the user's next gap-free sequence.
  @discardableResult
  package static func insertEvent(
    _ database: PostgresPool, user: String, type: String = "balance.changed"
  ) async throws -> Int64 {
    let row = try await database.queryFirst(
      """
      WITH seq AS (
        INSERT INTO user_event_sequences (user_id, last_sequence) VALUES (\(user), 1)
        ON CONFLICT (user_id) DO UPDATE SET last_sequence = user_event_sequences.last_sequence + 1
        RETURNING last_sequence)
      INSERT INTO events (id, type, user_id, sequence, data, user_state)
      SELECT gen_random_uuid(), \(type), \(user), last_sequence, '{}'::jsonb, '{}'::jsonb FROM seq
      RETURNING sequence
      """)
    guard let sequence = try row?.decode("sequence", as: Int64.self) else { throw Missing() }
    return sequence
  }

  /// A webhook endpoint at example.com taking `types`.
  package static func endpoint(
    _ store: WebhookStore, types: [String] = ["*"], enabled: Bool = true
  ) async throws -> UUID {
    let created = try await store.create(
      url: "https://example.com/h", eventTypes: types, enabled: enabled, by: ops)
    guard let id = UUID(uuidString: created.endpoint.id) else { throw Missing() }
    return id
  }
}
