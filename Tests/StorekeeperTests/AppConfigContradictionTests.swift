import Testing

@testable import Storekeeper
import StorekeeperCore

/// Settings that start cleanly and then do nothing, or worse: each is refused at start-up,
/// naming the variable.
@Suite struct AppConfigContradictionTests {
  let base = [
    "DATABASE_URL": "postgresql://u@127.0.0.1:5432/db", "APPLE_BUNDLE_ID": "com.example.app",
    "APPLE_APP_APPLE_ID": "1234567890", "APP_AUTH": "none",
  ]
  let apiKey = [
    "APPLE_API_KEY_FILE": "/dev/null", "APPLE_API_KEY_ID": "ABC123DEFG",
    "APPLE_API_ISSUER_ID": "57246542-96fe-1a63-e053-0824d011072a",
  ]

  func refused(_ env: [String: String]) -> String? {
    do {
      _ = try AppConfig.fromEnvironment(base.merging(env) { $1 })
      return nil
    } catch {
      return (error as? ConfigError)?.variable ?? "\(error)"
    }
  }

  @Test(arguments: [
    "CONSUMPTION_REFUND_PREFERENCE=decline", "CONSUMPTION_SAMPLE_CONTENT_PROVIDED=true",
    "CONSUMPTION_RETRY_BASE=1m", "NOTIFICATION_RECOVERY_INTERVAL=5m",
  ])
  func workThroughTheServerAPINeedsItsKey(_ setting: String) {
    let (name, value) = (
      String(setting.prefix { $0 != "=" }), String(setting.drop { $0 != "=" }.dropFirst())
    )
    #expect(refused([name: value]) == name)
    #expect(refused(apiKey.merging([name: value]) { $1 }) == nil)
  }

  @Test func aRetryWindowShorterThanItsFirstWaitIsRefused() {
    #expect(
      refused(["REPORT_RETRY_BASE": "2m", "REPORT_RETRY_WINDOW": "1m"]) == "REPORT_RETRY_WINDOW")
    #expect(
      refused(["WEBHOOK_RETRY_BASE": "2m", "WEBHOOK_RETRY_WINDOW": "1m"]) == "WEBHOOK_RETRY_WINDOW")
    #expect(refused(["REPORT_RETRY_BASE": "1m", "REPORT_RETRY_WINDOW": "1m"]) == nil)
  }

  @Test func anEnvironmentListNamingNothingIsRefused() {
    #expect(refused(["APPLE_ENVIRONMENTS": ","]) == "APPLE_ENVIRONMENTS")
    #expect(refused(["APPLE_ENVIRONMENTS": " , ,"]) == "APPLE_ENVIRONMENTS")
    #expect(refused(["APPLE_ENVIRONMENTS": "production,sandbox"]) == nil)
  }

  @Test func listenersThatWouldTakeOnePortFromEachOtherAreRefused() {
    for (host, admin) in [("127.0.0.1", "0.0.0.0"), ("0.0.0.0", "127.0.0.1"), ("127.0.0.1", "::")] {
      #expect(
        refused(["HOST": host, "PORT": "8080", "ADMIN_HOST": admin, "ADMIN_PORT": "8080"])
          == "ADMIN_PORT", "\(host) and \(admin)")
    }
    #expect(
      refused([
        "HOST": "127.0.0.1", "PORT": "8080", "ADMIN_HOST": "127.0.0.2", "ADMIN_PORT": "8080",
      ])
        == nil)
    #expect(
      refused(["HOST": "::1", "PORT": "8080", "ADMIN_HOST": "0.0.0.0", "ADMIN_PORT": "8080"]) == nil
    )
  }

  @Test func aMigrationsDirectoryWithoutMigrationsIsRefused() {
    #expect(refused(["MIGRATIONS_DIR": "/"]) == "MIGRATIONS_DIR")
    #expect(refused([:]) == nil, "found in the working directory")
  }
}
