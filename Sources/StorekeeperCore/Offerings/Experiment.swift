import Postgres

/// A split of one placement's audience between 2-4 offerings.
package struct Experiment: Encodable, Sendable, Equatable {
  package var experimentId: String
  package var placementId: String
  package var status: ExperimentStatus
  package var variants: [ExperimentVariant]
  /// Paid orders this long after a user's first exposure count for their variant.
  package var attributionHours: Int
  package var winner: String?
  var revision: Int64
  var createdAt: String
  var updatedAt: String
  var concludedAt: String?

  enum CodingKeys: String, CodingKey {
    case experimentId = "experiment_id"
    case placementId = "placement_id"
    case status, variants
    case attributionHours = "attribution_hours"
    case winner, revision
    case createdAt = "created_at"
    case updatedAt = "updated_at"
    case concludedAt = "concluded_at"
  }

  package static let maxAttributionHours = 8760
  package static let defaultAttributionHours = 168

  static let columns = """
    experiment_id, placement_id, status, variants::text AS variants, attribution_hours, winner,
    revision, \(SQLTime.rfc3339("created_at")), \(SQLTime.rfc3339("updated_at")),
    \(SQLTime.rfc3339("concluded_at"))
    """

  init(row: PostgresRow) throws {
    experimentId = try row.decode("experiment_id")
    placementId = try row.decode("placement_id")
    status = try row.decode("status")
    variants = try JSONCoding.decode(
      [ExperimentVariant].self, fromText: try row.decode("variants"))
    attributionHours = Int(try row.decode("attribution_hours", as: Int32.self))
    winner = try row.decodeIfPresent("winner")
    revision = try row.decode("revision")
    createdAt = try row.decode("created_at")
    updatedAt = try row.decode("updated_at")
    concludedAt = try row.decodeIfPresent("concluded_at")
  }

  /// The variant `userId` sees while the experiment runs.
  package func assign(_ userId: String) -> ExperimentVariant? {
    ExperimentAssignment.variant(experimentId: experimentId, userId: userId, variants: variants)
  }
}
