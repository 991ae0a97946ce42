import Foundation
import StorekeeperCore

/// Google Play's settings: all or nothing around `GOOGLE_PLAY_PACKAGE_NAME`.
extension AppConfig {
  static func readGooglePlay(_ env: [String: String], into config: inout AppConfig) throws {
    let reader = ConfigReader(env: env)
    let others = [
      "GOOGLE_PLAY_SERVICE_ACCOUNT_FILE", "GOOGLE_PLAY_API_URL", "GOOGLE_PUBSUB_AUDIENCE",
      "GOOGLE_PUBSUB_SERVICE_ACCOUNT", "GOOGLE_OIDC_JWKS_URL", "GOOGLE_PLAY_SWEEP_INTERVAL",
    ]
    guard let packageName = reader.value("GOOGLE_PLAY_PACKAGE_NAME") else {
      // A key file set without a package name is a half-made setup, not "off".
      if let stray = others.first(where: { reader.value($0) != nil }) {
        throw ConfigError(
          variable: "GOOGLE_PLAY_PACKAGE_NAME",
          problem: "is required when \(stray) is set (Google Play is off without it)")
      }
      config.googlePlay = nil
      return
    }
    guard isPackageName(packageName) else {
      throw ConfigError(
        variable: "GOOGLE_PLAY_PACKAGE_NAME",
        problem: "must be an Android package name such as com.example.app")
    }
    var settings = GooglePlaySettings(
      packageName: packageName,
      serviceAccountFile: try reader.required("GOOGLE_PLAY_SERVICE_ACCOUNT_FILE"))
    if let url = reader.value("GOOGLE_PLAY_API_URL") {
      try checkURL("GOOGLE_PLAY_API_URL", url, allowInsecure: config.allowInsecureURLs)
      settings.apiURL = url
    }
    if let url = reader.value("GOOGLE_OIDC_JWKS_URL") {
      try checkURL("GOOGLE_OIDC_JWKS_URL", url, allowInsecure: config.allowInsecureURLs)
      settings.oidcJWKSURL = url
    }
    settings.sweepIntervalMs =
      try reader.duration("GOOGLE_PLAY_SWEEP_INTERVAL") ?? settings.sweepIntervalMs
    settings.pubSubAudience = try reader.text("GOOGLE_PUBSUB_AUDIENCE")
    if let audience = settings.pubSubAudience, audience.count > 2048 {
      throw ConfigError(
        variable: "GOOGLE_PUBSUB_AUDIENCE", problem: "must be at most 2048 characters")
    }
    if let email = try reader.text("GOOGLE_PUBSUB_SERVICE_ACCOUNT") {
      guard email.contains("@"), !email.contains(where: \.isWhitespace) else {
        throw ConfigError(
          variable: "GOOGLE_PUBSUB_SERVICE_ACCOUNT", problem: "must be a service account email")
      }
      settings.pubSubServiceAccount = email
    }
    // Half a push check is none: the audience without the account lets any Google principal
    // mint accepted tokens.
    if (settings.pubSubAudience == nil) != (settings.pubSubServiceAccount == nil) {
      throw ConfigError(
        variable: settings.pubSubAudience == nil
          ? "GOOGLE_PUBSUB_AUDIENCE" : "GOOGLE_PUBSUB_SERVICE_ACCOUNT",
        problem: "is required with the other GOOGLE_PUBSUB_* setting (or set neither)")
    }
    config.googlePlay = settings
  }

  /// Google's rule: segments of letters, digits and `_`, each starting with a letter, joined
  /// by `.`, at least two.
  static func isPackageName(_ text: String) -> Bool {
    let segments = text.split(separator: ".", omittingEmptySubsequences: false)
    return text.utf8.count <= 255 && segments.count >= 2
      && segments.allSatisfy { segment in
        guard let first = segment.first, first.isASCII, first.isLetter else { return false }
        return segment.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }
      }
  }
}
