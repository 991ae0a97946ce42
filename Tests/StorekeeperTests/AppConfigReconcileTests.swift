import Testing

@testable import Storekeeper
@testable import StorekeeperAPI
@testable import StorekeeperCore

/// `RECONCILE_*`: off unless asked for, and only with the App Store Server API key.
@Suite struct AppConfigReconcileTests {
  let base = [
    "DATABASE_URL": "postgresql://u@127.0.0.1:5432/db", "APPLE_BUNDLE_ID": "com.example.app",
    "APP_AUTH": "none", "APPLE_APP_APPLE_ID": "1234567890",
  ]
  let api = [
    "APPLE_API_KEY_FILE": "/keys/api.p8", "APPLE_API_KEY_ID": "APIKEY0001",
    "APPLE_API_ISSUER_ID": "57246542-96fe-1a63-e053-0824d011072a",
  ]

  func config(_ extra: [String: String]) throws -> ReconcileSettings {
    try AppConfig.fromEnvironment(base.merging(api) { $1 }.merging(extra) { $1 }).reconcile
  }

  func refusal(_ env: [String: String]) -> String? {
    do {
      _ = try AppConfig.fromEnvironment(env)
      return nil
    } catch let error as ConfigError { return error.variable } catch { return "\(error)" }
  }

  @Test func theBackgroundPassIsOffByDefaultAndWithOff() throws {
    #expect(try config([:]) == ReconcileSettings())
    #expect(try config([:]).intervalMs == nil)
    #expect(try config(["RECONCILE_INTERVAL": "off"]).intervalMs == nil)
    #expect(try config(["RECONCILE_INTERVAL": "6h"]).intervalMs == 6 * 3_600_000)
  }

  @Test func itsBoundsAreRead() throws {
    let settings = try config([
      "RECONCILE_BATCH_SIZE": "10", "RECONCILE_MAX_PER_PASS": "500", "RECONCILE_RATE": "2.5",
      "RECONCILE_RECENT": "7d",
    ])
    #expect(settings.batchSize == 10 && settings.maxPerPass == 500)
    #expect(settings.ratePerSecond == 2.5 && settings.recentMs == 7 * 86_400_000)
  }

  @Test func wrongValuesNameTheirVariable() {
    let full = base.merging(api) { $1 }
    #expect(refusal(base.merging(["RECONCILE_INTERVAL": "1h"]) { $1 }) == "RECONCILE_INTERVAL")
    #expect(refusal(full.merging(["RECONCILE_INTERVAL": "soon"]) { $1 }) == "RECONCILE_INTERVAL")
    #expect(refusal(full.merging(["RECONCILE_RATE": "0"]) { $1 }) == "RECONCILE_RATE")
    #expect(refusal(full.merging(["RECONCILE_RATE": "nan"]) { $1 }) == "RECONCILE_RATE")
    #expect(refusal(full.merging(["RECONCILE_BATCH_SIZE": "0"]) { $1 }) == "RECONCILE_BATCH_SIZE")
    #expect(
      refusal(full.merging(["APPLE_API_SANDBOX_URL": "http://plain.example"]) { $1 })
        == "APPLE_API_SANDBOX_URL")
  }
}
