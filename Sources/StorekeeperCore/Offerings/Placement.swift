import Postgres

/// A place in an app (`main_shop`, `onboarding`) and the offering it serves: its own, or the
/// one of the first targeting rule that matches.
package struct Placement: Encodable, Sendable, Equatable {
  package var placementId: String
  package var offeringId: String
  package var rules: [TargetingRule]
  var revision: Int64
  var createdAt: String
  var updatedAt: String

  enum CodingKeys: String, CodingKey {
    case placementId = "placement_id"
    case offeringId = "offering_id"
    case rules, revision
    case createdAt = "created_at"
    case updatedAt = "updated_at"
  }

  /// The placement today's clients use; with no row it serves the whole catalog.
  package static let defaultId = "default"

  /// Its version as an entity tag: a PUT with `If-Match` replaces only the version it read.
  package var etag: String { "\"l\(revision)\"" }

  /// Every offering it can serve.
  package var offeringIds: Set<String> { Set([offeringId] + rules.map(\.offeringId)) }

  static let columns = """
    placement_id, offering_id, rules::text AS rules, revision,
    \(SQLTime.rfc3339("created_at")), \(SQLTime.rfc3339("updated_at"))
    """

  init(row: PostgresRow) throws {
    placementId = try row.decode("placement_id")
    offeringId = try row.decode("offering_id")
    let stored = try JSONValue(databaseText: try row.decode("rules"))
    let parsed = TargetingRule.parseList(stored)
    // Rules are validated before they are stored; a row that no longer parses (edited by hand)
    // is a decoding error, not a placement that silently serves its fallback.
    guard parsed.problems.isEmpty else {
      throw PostgresError(
        kind: .decoding,
        message: "placement \(placementId) has rules that do not parse: \(parsed.problems)")
    }
    rules = parsed.rules
    revision = try row.decode("revision")
    createdAt = try row.decode("created_at")
    updatedAt = try row.decode("updated_at")
  }
}
