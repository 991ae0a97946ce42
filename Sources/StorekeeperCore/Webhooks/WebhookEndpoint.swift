import Foundation
import Postgres

/// A webhook endpoint as the admin API shows it: never with its secrets.
package struct WebhookEndpoint: Codable, Sendable, Equatable {
  package var id: String
  var url: String
  /// `["*"]`: every event type.
  var eventTypes: [String]
  var enabled: Bool
  /// Why the endpoint was disabled automatically.
  var disabledReason: String?
  /// Since when every attempt has failed.
  var failingSince: String?
  var lastSuccessAt: String?
  /// While set, deliveries carry a second signature made with the rotated-out secret.
  var previousSecretExpiresAt: String?
  var createdAt: String
  var updatedAt: String

  enum CodingKeys: String, CodingKey {
    case id, url, enabled
    case eventTypes = "event_types"
    case disabledReason = "disabled_reason"
    case failingSince = "failing_since"
    case lastSuccessAt = "last_success_at"
    case previousSecretExpiresAt = "previous_secret_expires_at"
    case createdAt = "created_at"
    case updatedAt = "updated_at"
  }

  package static let allTypes = "*"

  static let columns = """
    id::text AS id, url, coalesce(array_to_string(event_types, ','), '*') AS event_types, enabled,
    disabled_reason, \(SQLTime.rfc3339("failing_since")), \(SQLTime.rfc3339("last_success_at")),
    CASE WHEN previous_secret_expires_at > now()
         THEN \(SQLTime.text("previous_secret_expires_at")) END AS previous_secret_expires_at,
    \(SQLTime.rfc3339("created_at")), \(SQLTime.rfc3339("updated_at"))
    """

  init(row: PostgresRow) throws {
    id = try row.decode("id")
    url = try row.decode("url")
    eventTypes = try row.decode("event_types", as: String.self).split(separator: ",").map(
      String.init)
    enabled = try row.decode("enabled")
    disabledReason = try row.decodeIfPresent("disabled_reason")
    failingSince = try row.decodeIfPresent("failing_since")
    lastSuccessAt = try row.decodeIfPresent("last_success_at")
    previousSecretExpiresAt = try row.decodeIfPresent("previous_secret_expires_at")
    createdAt = try row.decode("created_at")
    updatedAt = try row.decode("updated_at")
  }

  /// The stored filter: NULL for every type.
  static func storedTypes(_ types: [String]) -> String? {
    types == [allTypes] ? nil : "{" + types.joined(separator: ",") + "}"
  }

  /// A dotted event type (`order.paid`), or `*` alone.
  package static func isEventType(_ text: String) -> Bool {
    guard text.utf8.count <= 64 else { return false }
    let parts = text.split(separator: ".", omittingEmptySubsequences: false)
    return parts.count >= 2
      && parts.allSatisfy { part in
        guard let first = part.utf8.first, (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(first)
        else { return false }
        return part.utf8.allSatisfy {
          (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || $0 == UInt8(ascii: "_")
        }
      }
  }
}
