import AppAuth
import Foundation
import StorekeeperAPI
import StorekeeperCore

extension AppConfig {
  /// `APP_AUTH` and what its mode needs. Every mistake names its variable.
  static func parseAppAuth(_ env: [String: String], allowInsecureURLs: Bool) throws
    -> AppAuthSettings
  {
    func value(_ name: String) -> String? { env[name].flatMap { $0.isEmpty ? nil : $0 } }
    // The issuer and audience are compared with the token's own: a stray newline would refuse
    // every token, so it is refused here instead.
    func required(_ name: String) throws -> String {
      guard let text = try ConfigReader(env: env).text(name) else {
        throw ConfigError(variable: name, problem: "is required with APP_AUTH=jwt")
      }
      return text
    }
    switch value("APP_AUTH") {
    case nil:
      throw ConfigError(
        variable: "APP_AUTH",
        problem: "is required: jwt, api_key, or none (anyone may act for any user)")
    case "none":
      return .none
    case "api_key":
      return .apiKeys(try parseAPIKeys(value("APP_API_KEYS") ?? ""))
    case "jwt":
      var settings = JWTAuthSettings(
        issuer: try required("APP_JWT_ISSUER"), audience: try required("APP_JWT_AUDIENCE"))
      switch (value("APP_JWT_JWKS_URL"), value("APP_JWT_SECRET")) {
      case (let url?, nil):
        try checkURL("APP_JWT_JWKS_URL", url, allowInsecure: allowInsecureURLs)
        settings.jwksURL = url
      case (nil, let secret?):
        guard secret.utf8.count >= 32 else {
          throw ConfigError(variable: "APP_JWT_SECRET", problem: "must be at least 32 bytes")
        }
        settings.secret = Array(secret.utf8)
      case (.some, .some):
        throw ConfigError(
          variable: "APP_JWT_SECRET", problem: "cannot be set together with APP_JWT_JWKS_URL")
      case (nil, nil):
        throw ConfigError(
          variable: "APP_JWT_JWKS_URL",
          problem: "or APP_JWT_SECRET is required with APP_AUTH=jwt")
      }
      if let text = value("APP_JWT_LEEWAY") {
        guard let ms = text == "0" ? 0 : DurationParser.milliseconds(text), ms <= 60_000 else {
          throw ConfigError(
            variable: "APP_JWT_LEEWAY",
            problem: "must be a duration of at most 60s, got \"\(text)\"")
        }
        settings.leewaySeconds = Int(ms / 1000)
      }
      if let text = value("APP_JWT_JWKS_REFETCH_INTERVAL") {
        guard let ms = DurationParser.milliseconds(text), ms >= 1000, ms <= 3_600_000 else {
          throw ConfigError(
            variable: "APP_JWT_JWKS_REFETCH_INTERVAL",
            problem: "must be a duration from 1s to 1h, got \"\(text)\"")
        }
        settings.jwksRefetchSeconds = Int(ms / 1000)
      }
      return .jwt(settings)
    case let other?:
      throw ConfigError(
        variable: "APP_AUTH", problem: "must be jwt, api_key or none, got \"\(other)\"")
    }
  }

  /// `RECEIPTS_WITHOUT_SIGN_IN`: `true` or `false` (the default). Under `APP_AUTH=none` it
  /// changes nothing, as every request is let through there already.
  static func parseReceiptsWithoutSignIn(_ env: [String: String]) throws -> Bool {
    switch env["RECEIPTS_WITHOUT_SIGN_IN"] ?? "" {
    case "", "false": return false
    case "true": return true
    case let other:
      throw ConfigError(
        variable: "RECEIPTS_WITHOUT_SIGN_IN", problem: "must be true or false, got \"\(other)\"")
    }
  }

  /// `name:key` (a key of at least 32 characters) or `name:sha256:HEX` (its digest, so the
  /// configuration need not hold the key itself), comma-separated. Whitespace around an entry
  /// and around its name and key (newlines included) is dropped, as in `ADMIN_TOKENS`: a key
  /// presented in `Authorization` never carries it. A control character left inside is refused.
  static func parseAPIKeys(_ text: String) throws -> [APIKeySet.Entry] {
    var entries: [APIKeySet.Entry] = []
    for raw in text.split(separator: ",") {
      let entry = raw.trimmingCharacters(in: .whitespacesAndNewlines)
      guard !entry.isEmpty else { continue }
      guard !AdminToken.containsControl(entry) else {
        throw ConfigError(variable: "APP_API_KEYS", problem: "an entry holds a control character")
      }
      let parts = entry.split(separator: ":", maxSplits: 1).map {
        Substring($0.trimmingCharacters(in: .whitespacesAndNewlines))
      }
      guard parts.count == 2, !parts[0].isEmpty else {
        throw ConfigError(
          variable: "APP_API_KEYS", problem: "entries must look like name:key or name:sha256:HEX")
      }
      let name = String(parts[0])
      // "sha256:HEX" would otherwise be a key named sha256 whose value is the digest itself.
      guard name != "sha256" else {
        throw ConfigError(
          variable: "APP_API_KEYS",
          problem: "an entry has no name before sha256: write name:sha256:HEX")
      }
      if parts[1].hasPrefix("sha256:") {
        let hex = parts[1].dropFirst("sha256:".count)
        guard let digest = Self.hexBytes(hex), digest.count == 32 else {
          throw ConfigError(
            variable: "APP_API_KEYS",
            problem: "the sha256 of \"\(name)\" must be 64 hexadecimal digits")
        }
        entries.append(.init(name: name, digest: digest))
      } else {
        guard parts[1].count >= 32 else {
          throw ConfigError(
            variable: "APP_API_KEYS", problem: "key of \"\(name)\" is shorter than 32 characters")
        }
        entries.append(.init(name: name, digest: APIKeySet.digest(of: String(parts[1]))))
      }
    }
    guard !entries.isEmpty else {
      throw ConfigError(variable: "APP_API_KEYS", problem: "is required with APP_AUTH=api_key")
    }
    return entries
  }

  /// Outbound URLs carry proofs and keys: `https` unless `ALLOW_INSECURE_URLS=1` (tests, demo).
  /// Whitespace around one (a trailing space Foundation would send as `%20`) or a control
  /// character in it is refused, naming the variable.
  static func checkURL(_ name: String, _ value: String, allowInsecure: Bool) throws {
    try ConfigReader.checkClean(value, name)
    guard let url = URL(string: value), let scheme = url.scheme, url.host != nil,
      scheme == "https" || (allowInsecure && scheme == "http")
    else {
      throw ConfigError(
        variable: name,
        problem: allowInsecure
          ? "must be an http(s) URL" : "must be an https URL (ALLOW_INSECURE_URLS=1 allows http)")
    }
  }

  private static func hexBytes(_ hex: Substring) -> [UInt8]? {
    guard hex.count % 2 == 0 else { return nil }
    var bytes: [UInt8] = []
    var index = hex.startIndex
    while index < hex.endIndex {
      let next = hex.index(index, offsetBy: 2)
      guard let byte = UInt8(hex[index..<next], radix: 16) else { return nil }
      bytes.append(byte)
      index = next
    }
    return bytes
  }
}
