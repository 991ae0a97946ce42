import Foundation
import Postgres

/// Reads deliveries with their attempts for the admin listing, newest first, in keyset pages.
package struct WebhookDeliveryLog: Sendable {
  let database: PostgresPool

  package init(database: PostgresPool) {
    self.database = database
  }

  package struct Filter: Sendable {
    package var endpointId: UUID?
    package var state: WebhookDeliveryState?
    package var eventId: UUID?
    var limit = 50
    /// The last id of the previous page.
    var before: Int64?

    package init(
      endpointId: UUID? = nil, state: WebhookDeliveryState? = nil, eventId: UUID? = nil,
      limit: Int = 50,
      before: Int64? = nil
    ) {
      self.endpointId = endpointId
      self.state = state
      self.eventId = eventId
      self.limit = limit
      self.before = before
    }
  }

  /// A deleted endpoint's deliveries are left out: gone with it for admins, though the webhook
  /// loop removes them later.
  package func list(_ filter: Filter) async throws -> (deliveries: [WebhookDelivery], next: String?)
  {
    var query: PostgresQuery = """
      SELECT \(unescaped: WebhookDelivery.columns)
      FROM webhook_deliveries d JOIN events e ON e.position = d.event_position
      JOIN webhook_endpoints w ON w.id = d.endpoint_id AND w.deleted_at IS NULL WHERE true
      """
    if let endpoint = filter.endpointId { query.append(" AND d.endpoint_id = \(endpoint)") }
    if let state = filter.state { query.append(" AND d.state = \(state)") }
    if let event = filter.eventId { query.append(" AND e.id = \(event)") }
    if let before = filter.before { query.append(" AND d.id < \(before)") }
    query.append(" ORDER BY d.id DESC LIMIT \(filter.limit + 1)")
    let rows = try await database.query(query).map(WebhookDelivery.init(row:))
    var page = KeysetPage.split(rows, limit: filter.limit) { String($0.id) }
    guard !page.items.isEmpty else { return (page.items, page.next) }
    let ids = page.items.map { String($0.id) }.joined(separator: ",")
    var attempts: [Int64: [WebhookAttempt]] = [:]
    for row in try await database.query(
      """
      SELECT \(unescaped: WebhookAttempt.columns) FROM webhook_attempts
      WHERE delivery_id = ANY (string_to_array(\(ids), ',')::bigint[]) ORDER BY delivery_id, id
      """)
    {
      attempts[try row.decode("delivery_id"), default: []].append(try WebhookAttempt(row: row))
    }
    for index in page.items.indices {
      page.items[index].attempts = attempts[page.items[index].id] ?? []
    }
    return (page.items, page.next)
  }
}
