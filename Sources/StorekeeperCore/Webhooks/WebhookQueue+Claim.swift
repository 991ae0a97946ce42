import Foundation
import Postgres

extension WebhookQueue {
  /// How many deliveries found waiting behind an earlier one of their user one claim parks at
  /// most: one short statement, and more than a busy user's events in a pass.
  package static let parkBatch = 1000

  /// Claims up to `limit` due deliveries of one endpoint, while it is enabled and not deleted
  /// (`dueEndpoints` may be older than a change), each the earliest undelivered one of its user
  /// there, and none while another of that user's is in flight or waiting between its
  /// attempts. The second rule matters for replays only: a replayed event sorts before the
  /// later events already sent, and would otherwise go out beside one of them in flight.
  package func claim(endpoint: UUID, limit: Int) async throws -> [Claim] {
    let rows = try await database.query(claimQuery(endpoint: endpoint, limit: limit))
    return try rows.map { row in
      var secrets: [String] = [try row.decode("secret")]
      if let previous: String = try row.decodeIfPresent("previous_secret") {
        secrets.append(previous)
      }
      return Claim(
        id: try row.decode("id"), endpointId: try row.decode("endpoint_id"),
        url: try row.decode("url"), secrets: secrets, eventId: try row.decode("event_id"),
        body: Array(try row.decode("body", as: String.self).utf8),
        attempt: try row.decode("attempts"), firstAttemptMs: try row.decode("first_attempt_ms"))
    }
  }

  /// The claim as one statement (tests read its plan). Besides claiming, it parks the due
  /// deliveries it walked past that wait behind an earlier one of their user: parked
  /// (`next_attempt_at` 'infinity') they are out of the due index, so a user whose first
  /// delivery keeps failing costs later claims nothing however many events pile up behind it
  /// (finishing that one promotes the next: `Migrations/repeatable/webhook_promotion.sql`). It
  /// parks only what the claim walked (up to its last claim, or all it saw when it found fewer
  /// than `limit`), so a claim among many sendable deliveries walks no further than before. A
  /// delivery is parked only while the one it waits for is locked here and still pending: the
  /// update finishing that one waits, and its trigger then sees the parked row and promotes it;
  /// a finished one is seen as finished and nothing is parked.
  /// The two rules are scalar subqueries, looked up per row walked in the user's index: as
  /// `NOT EXISTS` the planner may make them a join reading the endpoint's whole backlog per
  /// row (it did on a table not yet analysed).
  func claimQuery(endpoint: UUID, limit: Int) -> PostgresQuery {
    """
    WITH due AS MATERIALIZED (
      SELECT d.id, d.next_attempt_at FROM webhook_deliveries d
      WHERE d.endpoint_id = \(endpoint) AND d.state = \(literal: .pending) AND d.next_attempt_at <= now()
        AND EXISTS (
          SELECT 1 FROM webhook_endpoints w
          WHERE w.id = d.endpoint_id AND w.enabled AND w.deleted_at IS NULL)
        AND (
          SELECT p.id FROM webhook_deliveries p
          WHERE p.endpoint_id = d.endpoint_id AND p.user_id = d.user_id
            AND p.state = \(literal: .pending) AND (p.sequence, p.id) < (d.sequence, d.id)
          LIMIT 1) IS NULL
        AND (
          SELECT q.id FROM webhook_deliveries q
          WHERE q.endpoint_id = d.endpoint_id AND q.user_id = d.user_id
            AND q.state = \(literal: .pending) AND q.attempts > 0 AND q.id <> d.id
            AND q.next_attempt_at > now() AND q.next_attempt_at < 'infinity'
          LIMIT 1) IS NULL
      ORDER BY d.next_attempt_at, d.id
      LIMIT \(limit)
      FOR UPDATE OF d SKIP LOCKED),
    edge AS MATERIALIZED (
      SELECT coalesce(last.at, now()) AS at, coalesce(last.id, 9223372036854775807) AS id
      FROM (SELECT 1) one LEFT JOIN (
        SELECT next_attempt_at AS at, id FROM due WHERE (SELECT count(*) FROM due) >= \(limit)
        ORDER BY next_attempt_at DESC, id DESC LIMIT 1) last ON true),
    stuck AS MATERIALIZED (
      SELECT d.id FROM webhook_deliveries d
      JOIN webhook_deliveries p ON p.state = \(literal: .pending) AND p.id = (
        SELECT b.id FROM webhook_deliveries b
        WHERE b.endpoint_id = d.endpoint_id AND b.user_id = d.user_id
          AND b.state = \(literal: .pending) AND (b.sequence, b.id) < (d.sequence, d.id)
        ORDER BY b.sequence, b.id LIMIT 1)
      WHERE d.endpoint_id = \(endpoint) AND d.state = \(literal: .pending) AND d.next_attempt_at <= now()
        AND (d.next_attempt_at, d.id) <= ((SELECT at FROM edge), (SELECT id FROM edge))
      ORDER BY d.next_attempt_at, d.id
      LIMIT \(Self.parkBatch)
      FOR UPDATE OF d SKIP LOCKED FOR SHARE OF p SKIP LOCKED),
    parked AS (
      UPDATE webhook_deliveries d SET next_attempt_at = 'infinity' FROM stuck WHERE d.id = stuck.id),
    claimed AS (
      UPDATE webhook_deliveries d
      SET attempts = d.attempts + 1, first_attempt_at = coalesce(d.first_attempt_at, now()),
          next_attempt_at = now() + \(settings.leaseMs) * interval '1 millisecond'
      FROM due WHERE d.id = due.id
      RETURNING d.id, d.endpoint_id, d.event_position, d.attempts, d.first_attempt_at)
    SELECT c.id, c.attempts,
           (extract(epoch FROM c.first_attempt_at) * 1000)::bigint AS first_attempt_ms,
           w.id AS endpoint_id, w.url, w.secret,
           CASE WHEN w.previous_secret_expires_at > now() THEN w.previous_secret END
             AS previous_secret,
           e.id::text AS event_id,
           json_build_object(
             'id', e.id, 'type', e.type, 'created_at', \(unescaped: SQLTime.text("e.created_at")),
             'user_id', e.user_id, 'sequence', e.sequence, 'data', e.data,
             'user_state', e.user_state)::text AS body
    FROM claimed c
    JOIN webhook_endpoints w ON w.id = c.endpoint_id
    JOIN events e ON e.position = c.event_position
    ORDER BY c.id
    """
  }
}
