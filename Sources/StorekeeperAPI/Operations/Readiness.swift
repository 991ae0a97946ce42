import Foundation
import StorekeeperCore

/// `GET /readyz`'s answer: ready, and what an operator must fix that does not make the
/// instance unready (`problems` is left out when there is none).
struct Readiness: Encodable, Sendable {
  struct Problem: Encodable, Sendable {
    var code = "apple_configuration"
    /// The environment variable to fix, when a setting is to blame.
    var setting: String?
    var appleStatus: Int?
    /// The verifyReceipt endpoint that said so: "Production" or "Sandbox".
    var environment: String?
    var detail: String
    var since: String
    var count: Int64

    private enum CodingKeys: String, CodingKey {
      case code, setting, environment, detail, since, count
      case appleStatus = "apple_status"
    }
  }

  var status = "ready"
  /// The release this instance runs, so an operator can see what each one runs.
  var version = BuildInfo.version
  var problems: [Problem]?
  /// The read replica's state and lag, when `DATABASE_READ_URL` is set.
  var replica: ReplicaLag?

  /// The app sign-in service's key set after Apple's problems: none fetched, or the last fetch
  /// failed (`AppJWKSHealth`).
  mutating func add(appJWKS problems: [Problem]) {
    guard !problems.isEmpty else { return }
    self.problems = (self.problems ?? []) + problems
  }

  /// Google Play's problems after Apple's: a refused service account, and acknowledgements
  /// still open a day after their purchase (Google refunds at three days).
  mutating func add(google problems: [Problem]) {
    guard !problems.isEmpty else { return }
    self.problems = (self.problems ?? []) + problems
  }

  init(_ apple: [AppleConfigurationMonitor.Problem]) {
    let formatter = ISO8601DateFormatter()
    problems =
      apple.isEmpty
      ? nil
      : apple.map { problem in
        let wrong = problem.misconfiguration
        return Problem(
          setting: wrong.setting.variable, appleStatus: wrong.status,
          environment: wrong.environment,
          detail: "\(wrong.setting.service) answered \(wrong.status): check "
            + "\(wrong.setting.variable); what needs it waits until it is fixed",
          since: formatter.string(
            from: Date(timeIntervalSince1970: Double(problem.firstSeenMs) / 1000)),
          count: problem.count)
      }
  }
}
