import Postgres

/// Where an experiment is in its life, as `experiments.status` spells it.
package enum ExperimentStatus: String, Codable, Sendable, CaseIterable, PostgresEnum {
  /// Assigns and records exposures.
  case running
  /// The placement serves its own offering to everyone; assignment resumes unchanged.
  case paused
  /// Over: the winner's offering became the placement's.
  case concluded
}
