import AppAuth
import Foundation

/// The app sign-in service's key set (`APP_JWT_JWKS_URL`), for `/readyz` and `/metrics`: without
/// one, every signed-in request is 401, which nothing else would tell the operator or the
/// balancer. Like Google's and Apple's configuration problems it is reported, never judged: the
/// instance stays ready, since taking it out of rotation would fix nothing (every instance has
/// the same URL) and an issuer's outage must not take every instance out at once.
package struct AppJWKSHealth: Sendable {
  package static let variable = "APP_JWT_JWKS_URL"
  let source: JWKSKeySource

  package init(source: JWKSKeySource) {
    self.source = source
  }

  func problems() async -> [Readiness.Problem] {
    let health = await source.health
    guard let problem = Self.problem(health) else { return [] }
    return [problem]
  }

  /// None while keys are held and the last fetch succeeded.
  static func problem(_ health: JWKSKeySource.Health) -> Readiness.Problem? {
    guard let detail = detail(health) else { return nil }
    return Readiness.Problem(
      code: "app_jwt_jwks", setting: variable, detail: detail,
      since: Self.date(health.failure?.sinceMs ?? health.fetchedAtMs ?? health.createdAtMs),
      count: health.failure?.count ?? 0)
  }

  /// What is wrong with the key set, for `/readyz` and the start-up log; nil when nothing is.
  package static func detail(_ health: JWKSKeySource.Health) -> String? {
    let lastError = health.failure.map { " (last error: \($0.detail))" } ?? ""
    if health.fetchedAtMs == nil {
      return "no key set has been fetched from \(variable)\(lastError): every signed-in request "
        + "is refused (401) until one is; check the URL and that the sign-in service answers it"
    }
    if health.keys == 0 {
      return "the key set fetched from \(variable) holds no key this server can use (RS256, "
        + "ES256 on P-256)\(lastError): every signed-in request is refused (401)"
    }
    if health.failure != nil {
      return "the last fetch of \(variable) failed\(lastError); the \(health.keys) key(s) "
        + "fetched at \(date(health.fetchedAtMs ?? 0)) still verify, a key rotated in since does "
        + "not"
    }
    return nil
  }

  private static func date(_ ms: Int64) -> String {
    ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: Double(ms) / 1000))
  }

  func lines() async -> [String] {
    let health = await source.health
    let failing = Self.problem(health) != nil
    return [
      "# HELP storekeeper_app_jwt_jwks_errors 1 while no usable key set from \(Self.variable) "
        + "is held or its last fetch failed (signed-in requests are 401 without one).",
      "# TYPE storekeeper_app_jwt_jwks_errors gauge",
      "storekeeper_app_jwt_jwks_errors{setting=\"\(Self.variable)\"} \(failing ? 1 : 0)",
      "# HELP storekeeper_app_jwt_jwks_errors_total Fetches of \(Self.variable) since start "
        + "that failed (unreachable, not 200, or not a key set).",
      "# TYPE storekeeper_app_jwt_jwks_errors_total counter",
      "storekeeper_app_jwt_jwks_errors_total{setting=\"\(Self.variable)\"} \(health.failuresTotal)",
      "# HELP storekeeper_app_jwt_jwks_keys Keys held from \(Self.variable) (0 until a fetch "
        + "succeeds).",
      "# TYPE storekeeper_app_jwt_jwks_keys gauge",
      "storekeeper_app_jwt_jwks_keys \(health.keys)",
    ]
  }
}
