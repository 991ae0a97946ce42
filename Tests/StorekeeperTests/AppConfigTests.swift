import Testing

@testable import Storekeeper
@testable import StorekeeperAPI
@testable import StorekeeperCore

@Suite struct AppConfigTests {
  let base = [
    "DATABASE_URL": "postgresql://u@127.0.0.1:5432/db", "APPLE_BUNDLE_ID": "com.example.app",
    "APP_AUTH": "none", "APPLE_APP_APPLE_ID": "1234567890",
  ]

  func error(_ env: [String: String]) -> ConfigError? {
    do {
      _ = try AppConfig.fromEnvironment(env)
      return nil
    } catch let error as ConfigError {
      return error
    } catch {
      return nil
    }
  }

  @Test func readsDefaultsAndValues() throws {
    var env = base
    env["PORT"] = "9090"
    env["ADMIN_TOKENS"] = "ops:0123456789abcdef,ci:fedcba9876543210"
    env["APPLE_ENVIRONMENTS"] = "production, sandbox"
    env["ORDER_TTL"] = "15m"
    env["DB_STATEMENT_CACHE_SIZE"] = "0"
    let config = try AppConfig.fromEnvironment(env)
    #expect(config.statementCacheSize == 0)
    #expect(try AppConfig.fromEnvironment(base).statementCacheSize == 100)
    #expect(config.port == 9090)
    #expect(config.adminTokens.map(\.name) == ["ops", "ci"])
    #expect(config.environments == ["Production", "Sandbox"])
    #expect(config.orderTTLSeconds == 900)
    #expect(try AppConfig.fromEnvironment(base).orderTTLSeconds == 86_400)
  }

  @Test func readsTheConnectionCap() throws {
    #expect(try AppConfig.fromEnvironment(base).maxConnections == 10_000)
    var env = base
    env["MAX_CONNECTIONS"] = "64"
    #expect(try AppConfig.fromEnvironment(env).maxConnections == 64)
    env["MAX_CONNECTIONS"] = "0"
    #expect(error(env)?.variable == "MAX_CONNECTIONS")
  }

  @Test func namesTheVariableThatIsWrong() throws {
    #expect(error([:])?.variable == "DATABASE_URL")
    #expect(error(["DATABASE_URL": base["DATABASE_URL"]!])?.variable == "APPLE_BUNDLE_ID")
    #expect(error(base.merging(["PORT": "http"]) { $1 })?.variable == "PORT")
    #expect(error(base.merging(["PORT": "70000"]) { $1 })?.variable == "PORT")
    #expect(error(base.merging(["DATABASE_URL": "mysql://x"]) { $1 })?.variable == "DATABASE_URL")
    #expect(error(base.merging(["ADMIN_TOKENS": "ops:short"]) { $1 })?.variable == "ADMIN_TOKENS")
    #expect(
      error(base.merging(["APPLE_ENVIRONMENTS": "xcode"]) { $1 })?.variable == "APPLE_ENVIRONMENTS")
    #expect(error(base.merging(["ORDER_TTL": "soon"]) { $1 })?.variable == "ORDER_TTL")
    // Huge durations overflowed later (3 × APPLE_TIMEOUT trapped the retry worker).
    #expect(error(base.merging(["ORDER_TTL": "3650d"]) { $1 }) == nil)
    for name in ["APPLE_TIMEOUT", "ORDER_TTL", "SWEEP_INTERVAL", "WEBHOOK_RETENTION"] {
      #expect(error(base.merging([name: "3651d"]) { $1 })?.variable == name)
      #expect(
        error(base.merging([name: "3000000000000000000ms"]) { $1 })?.variable == name)
    }
    #expect(error(base.merging(["LOG_LEVEL": "loud"]) { $1 })?.variable == "LOG_LEVEL")
    // Refused here, naming the variable, rather than failing later without naming it.
    #expect(error(base.merging(["HOST": "localhost"]) { $1 })?.variable == "HOST")
    #expect(error(base.merging(["HOST": "::1"]) { $1 }) == nil)
    #expect(
      error(base.merging(["ADMIN_HOST": "admin.internal", "ADMIN_PORT": "9090"]) { $1 })?.variable
        == "ADMIN_HOST")
    #expect(
      error(base.merging(["PORT": "8080", "ADMIN_PORT": "8080"]) { $1 })?.variable == "ADMIN_PORT")
    #expect(
      error(base.merging(["PORT": "8080", "ADMIN_PORT": "8080", "ADMIN_HOST": "127.0.0.2"]) { $1 })
        == nil)
    #expect(error(base.merging(["PORT": "0", "ADMIN_PORT": "0"]) { $1 }) == nil)
    #expect(
      error(base.merging(["MIGRATIONS_DIR": "/nonexistent/migrations"]) { $1 })?.variable
        == "MIGRATIONS_DIR")
    for ttl in ["500ms", "1500ms", "0s"] {
      #expect(error(base.merging(["ORDER_TTL": ttl]) { $1 })?.variable == "ORDER_TTL", "\(ttl)")
    }
    #expect(
      try AppConfig.fromEnvironment(base.merging(["ORDER_TTL": "2000ms"]) { $1 }).orderTTLSeconds
        == 2)
    #expect(
      error(base.merging(["DB_STATEMENT_CACHE_SIZE": "-1"]) { $1 })?.variable
        == "DB_STATEMENT_CACHE_SIZE")
  }

  @Test func theAppStoreServerAPISettingsComeTogether() throws {
    #expect(try AppConfig.fromEnvironment(base).apiKeyPath == nil)
    // Apple's recommended hosts, unless the variables say otherwise.
    #expect(try AppConfig.fromEnvironment(base).apiURL == "https://api.storekit.apple.com")
    #expect(
      try AppConfig.fromEnvironment(base).apiSandboxURL == "https://api.storekit-sandbox.apple.com")
    #expect(error(base.merging(["APPLE_API_KEY_ID": "K"]) { $1 })?.variable == "APPLE_API_KEY_FILE")
    #expect(
      error(base.merging(["APPLE_API_KEY_FILE": "/k.p8", "APPLE_API_KEY_ID": "K"]) { $1 })?
        .variable == "APPLE_API_ISSUER_ID")
    var env = base
    env["APPLE_API_KEY_FILE"] = "/k.p8"
    env["APPLE_API_KEY_ID"] = "K"
    env["APPLE_API_ISSUER_ID"] = "I"
    env["APPLE_API_URL"] = "http://127.0.0.1:9"
    env["APPLE_API_SANDBOX_URL"] = "https://sandbox.example.com"
    env["NOTIFICATION_RECOVERY_INTERVAL"] = "15m"
    #expect(error(env)?.variable == "APPLE_API_URL")
    env["ALLOW_INSECURE_URLS"] = "1"
    let config = try AppConfig.fromEnvironment(env)
    #expect(config.apiKeyPath == "/k.p8" && config.apiKeyId == "K" && config.apiIssuerId == "I")
    #expect(config.apiURL == "http://127.0.0.1:9")
    #expect(config.apiSandboxURL == "https://sandbox.example.com")
    #expect(config.notificationRecoveryIntervalMs == 900_000)
    #expect(error(env.merging(["APPLE_API_URL": "ftp://x"]) { $1 })?.variable == "APPLE_API_URL")
  }

  /// The charts' counted zone: any IANA name by its characters (PostgreSQL is asked at
  /// start-up whether it knows it), never SQL.
  @Test func readsTheChartsTimeZone() throws {
    #expect(try AppConfig.fromEnvironment(base).chartsTimeZone == "UTC")
    for zone in ["Europe/Berlin", "America/Argentina/Buenos_Aires", "Etc/GMT+5", "UTC"] {
      #expect(
        try AppConfig.fromEnvironment(base.merging(["CHARTS_TIME_ZONE": zone]) { $1 })
          .chartsTimeZone == zone)
    }
    for zone in [
      "Europe/Berlin;drop", "Europe/Berlin'", "Europe Berlin", String(repeating: "A", count: 65),
    ] {
      #expect(
        error(base.merging(["CHARTS_TIME_ZONE": zone]) { $1 })?.variable == "CHARTS_TIME_ZONE")
    }
  }

  @Test func parsesDurations() {
    #expect(DurationParser.milliseconds("500ms") == 500)
    #expect(DurationParser.milliseconds("90s") == 90_000)
    #expect(DurationParser.milliseconds("15m") == 900_000)
    #expect(DurationParser.milliseconds("24h") == 86_400_000)
    #expect(DurationParser.milliseconds("3d") == 259_200_000)
    #expect(DurationParser.milliseconds("42") == 42_000)
    #expect(DurationParser.milliseconds("-1s") == nil)
    #expect(DurationParser.milliseconds("1.5s") == nil)
  }
}
