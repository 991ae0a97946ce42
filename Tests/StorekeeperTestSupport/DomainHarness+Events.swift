import AppStore
import Foundation
import Postgres
import StorekeeperCore

/// Reading back what the outbox wrote, and the fixtures events need.
extension DomainHarness {
  package struct WrittenEvent: Sendable {
    package var type: String
    package var sequence: Int64
    package var data: JSONValue
    /// `user_state` as `JSONCoding` writes an `Entitlements`, to compare with `view`'s.
    package var state: String
  }

  /// `user`'s events in sequence order.
  package func writtenEvents(_ user: String) async throws -> [WrittenEvent] {
    try await database.query(
      """
      SELECT type, sequence, data::text AS data, user_state::text AS state FROM events
      WHERE user_id = \(user) ORDER BY sequence
      """
    ).map { row in
      WrittenEvent(
        type: try row.decode("type"), sequence: try row.decode("sequence"),
        data: try JSONCoding.decode(JSONValue.self, fromText: try row.decode("data")),
        state: try JSONCoding.text(
          try JSONCoding.decode(Entitlements.self, fromText: try row.decode("state"))))
    }
  }

  /// What `GET /v1/users/{user}/entitlements` answers now, as text.
  package func stateNow(_ user: String) async throws -> String {
    try JSONCoding.text(try await entitlements.view(userId: user))
  }

  package func addProduct(_ productId: String, type: ProductType, grants: String) async throws {
    try await database.execute(
      """
      INSERT INTO products (product_id, type, title, description, price, currency, sort_order,
                            active, grants, content)
      VALUES (\(productId), \(type), 'P', '', 4.99, 'USD', 1, true, \(grants)::jsonb, '{}')
      """)
  }

  /// A notification as `NotificationService` stores it, about `transaction` (with its dates).
  package static func notification(
    _ type: String, subtype: String? = nil, transaction: VerifiedTransaction? = nil,
    originalTransactionId: String? = nil
  ) throws -> StoredNotification {
    var body: [String: Any] = [
      "notificationType": type, "notificationUUID": UUID().uuidString, "version": "2.0",
    ]
    if let subtype { body["subtype"] = subtype }
    var document: [String: Any] = ["notification": body]
    if let transaction {
      var fields: [String: Any] = [
        "transactionId": transaction.transactionId,
        "originalTransactionId": transaction.originalTransactionId,
        "bundleId": transaction.bundleId, "productId": transaction.productId,
        "purchaseDate": transaction.purchaseDate, "quantity": transaction.quantity,
        "type": transaction.type ?? "Consumable", "environment": transaction.environment,
      ]
      if let expires = transaction.expiresDate { fields["expiresDate"] = expires }
      if let revoked = transaction.revocationDate { fields["revocationDate"] = revoked }
      document["transaction"] = fields
    }
    if let originalTransactionId {
      document["renewal_info"] = ["originalTransactionId": originalTransactionId]
    }
    let data = try JSONSerialization.data(withJSONObject: document)
    return try JSONDecoder().decode(StoredNotification.self, from: data)
  }

  package func apply(_ stored: StoredNotification) async throws -> NotificationOutcome {
    try await database.withTransaction { tx in
      try await NotificationEffects(
        settlement: settlement, catalog: catalog, clock: clock.clock, tx: tx, uuid: "n"
      ).apply(stored)
    }
  }
}
