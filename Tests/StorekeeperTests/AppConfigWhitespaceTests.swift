import AppAuth
import Testing

@testable import Storekeeper
@testable import StorekeeperAPI
@testable import StorekeeperCore

/// Values with stray whitespace: a secret file's trailing newline, an env file's trailing
/// space, a space before a comma. Tokens and keys (never presented with whitespace around them)
/// are trimmed; identifiers and URLs compared with what others send are refused, naming the
/// variable, since trimming them would be a guess.
@Suite struct AppConfigWhitespaceTests {
  static let adminToken = "0123456789abcdef0123"
  static let key1 = String(repeating: "k", count: 36)
  static let key2 = String(repeating: "z", count: 36)
  static let metrics = "metricsmetricsmetrics99"

  let base = [
    "DATABASE_URL": "postgresql://u@127.0.0.1:5432/db", "APPLE_BUNDLE_ID": "com.example.app",
    "APPLE_APP_APPLE_ID": "1234567890", "APP_AUTH": "none",
  ]
  let jwt = [
    "APP_AUTH": "jwt", "APP_JWT_ISSUER": "https://login.example.com",
    "APP_JWT_AUDIENCE": "storekeeper", "APP_JWT_SECRET": String(repeating: "s", count: 32),
  ]

  func config(_ env: [String: String]) throws -> AppConfig {
    try AppConfig.fromEnvironment(base.merging(env) { $1 })
  }

  func refusal(_ env: [String: String]) -> ConfigError? {
    do {
      _ = try config(env)
      return nil
    } catch {
      return error as? ConfigError
    }
  }

  @Test func tokensAndKeysFromASecretFileMatchTheBareSecret() throws {
    let tokens = try config([
      "ADMIN_TOKENS": "ops:\(Self.adminToken)\n", "METRICS_TOKEN": "\(Self.metrics)\t\n",
    ])
    #expect(tokens.adminTokens == [AdminToken(name: "ops", token: Self.adminToken)])
    #expect(tokens.metricsToken == AdminToken(name: "metrics", token: Self.metrics, scope: .read))
    let spaced = try config([
      "ADMIN_TOKENS": " ops : \(Self.adminToken) : read ,\nci:\(Self.adminToken)x\r\n"
    ])
    #expect(spaced.adminTokens.map(\.name) == ["ops", "ci"])
    #expect(spaced.adminTokens[0] == AdminToken(name: "ops", token: Self.adminToken, scope: .read))
    #expect(spaced.adminTokens[1].credential == .plain(Array("\(Self.adminToken)x".utf8)))
  }

  @Test func apiKeysWithASpaceBeforeTheCommaMatchTheBareKeys() throws {
    let keys = try config([
      "APP_AUTH": "api_key", "APP_API_KEYS": "backend:\(Self.key1) , other : \(Self.key2)\n",
    ])
    guard case .apiKeys(let entries) = keys.appAuth else {
      Issue.record("not api_key")
      return
    }
    #expect(entries.map(\.name) == ["backend", "other"])
    #expect(
      entries.map(\.digest) == [APIKeySet.digest(of: Self.key1), APIKeySet.digest(of: Self.key2)])
  }

  @Test func aControlCharacterInsideATokenOrKeyIsRefused() {
    #expect(refusal(["ADMIN_TOKENS": "ops:0123456789\u{7}abcdef"])?.variable == "ADMIN_TOKENS")
    #expect(refusal(["METRICS_TOKEN": "metricsmetrics\u{0}metrics"])?.variable == "METRICS_TOKEN")
    #expect(
      refusal(["APP_AUTH": "api_key", "APP_API_KEYS": "a:\(Self.key1)\u{1b}"])?.variable
        == "APP_API_KEYS")
  }

  /// Each of these is compared with what a token, a transaction or Apple carries, or sent as
  /// written: with a stray newline or space it would never match, so start-up names it.
  static let identifiers: [(String, String)] = [
    ("APPLE_BUNDLE_ID", "com.example.app\n"),
    ("APPLE_BUNDLE_ID", " com.example.app"),
    ("APPLE_SHARED_SECRET", "0123456789abcdef\n"),
    ("APPLE_API_KEY_ID", "ABC123DEFG\n"),
    ("APPLE_API_ISSUER_ID", "57246542-96fe-1a63-e053-0824d011072a "),
    ("APPLE_OFFER_KEY_ID", "ABC123DEFG\r\n"),
    ("APPLE_VERIFY_RECEIPT_URL", "https://buy.itunes.apple.com/verifyReceipt "),
    ("APPLE_API_URL", "https://api.storekit.apple.com\n"),
    ("APPLE_API_SANDBOX_URL", "\thttps://api.storekit-sandbox.apple.com"),
    ("DATABASE_URL", "postgresql://u@127.0.0.1:5432/db\n"),
    ("DATABASE_READ_URL", "postgresql://u@replica:5432/db "),
    ("DATABASE_DIRECT_URL", "postgresql://u@primary:5432/d\u{7}b"),
  ]

  @Test(arguments: identifiers)
  func anIdentifierOrURLWithStrayWhitespaceIsRefusedNamingIt(_ variable: String, _ value: String) {
    var env: [String: String] = [:]
    if variable.hasPrefix("APPLE_API_") && variable.hasSuffix("_ID") {
      env = [
        "APPLE_API_KEY_FILE": "/nonexistent.p8", "APPLE_API_KEY_ID": "ABC123DEFG",
        "APPLE_API_ISSUER_ID": "57246542-96fe-1a63-e053-0824d011072a",
      ]
    }
    if variable == "APPLE_OFFER_KEY_ID" { env["APPLE_OFFER_KEY_FILE"] = "/nonexistent.p8" }
    env[variable] = value
    let error = refusal(env)
    #expect(error?.variable == variable, "\(String(describing: error))")
    #expect(error?.problem.contains(value.trimmingCharacters(in: .whitespacesAndNewlines)) == false)
  }

  @Test func theSignInSettingsWithStrayWhitespaceAreRefusedNamingThem() {
    #expect(
      refusal(jwt.merging(["APP_JWT_ISSUER": "https://login.example.com\n"]) { $1 })?.variable
        == "APP_JWT_ISSUER")
    #expect(
      refusal(jwt.merging(["APP_JWT_AUDIENCE": " storekeeper"]) { $1 })?.variable
        == "APP_JWT_AUDIENCE")
    var jwks = jwt
    jwks["APP_JWT_SECRET"] = nil
    jwks["APP_JWT_JWKS_URL"] = "https://login.example.com/jwks "
    #expect(refusal(jwks)?.variable == "APP_JWT_JWKS_URL")
  }

  @Test func googlesAudienceWithStrayWhitespaceIsRefusedNamingIt() {
    let google = [
      "GOOGLE_PLAY_PACKAGE_NAME": "com.example.app",
      "GOOGLE_PLAY_SERVICE_ACCOUNT_FILE": "/nonexistent.json",
      "GOOGLE_PUBSUB_SERVICE_ACCOUNT": "push@example.iam.gserviceaccount.com",
      "GOOGLE_PUBSUB_AUDIENCE": "https://storekeeper.example.com/v1/google/notifications\n",
    ]
    #expect(refusal(google)?.variable == "GOOGLE_PUBSUB_AUDIENCE")
  }
}
