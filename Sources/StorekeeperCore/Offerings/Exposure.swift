/// A user served an experiment's variant, as the request that served it saw it.
package struct Exposure: Encodable, Sendable, Equatable {
  package var experimentId: String
  package var userId: String
  package var variant: String
  /// Milliseconds since 1970, when it was served.
  package var atMs: Int64

  package init(experimentId: String, userId: String, variant: String, atMs: Int64) {
    self.experimentId = experimentId
    self.userId = userId
    self.variant = variant
    self.atMs = atMs
  }

  enum CodingKeys: String, CodingKey {
    case experimentId = "experiment_id"
    case userId = "user_id"
    case variant
    case atMs = "at_ms"
  }
}
