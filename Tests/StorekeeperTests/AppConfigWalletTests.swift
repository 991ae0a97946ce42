import Testing

@testable import Storekeeper
@testable import StorekeeperCore

/// `REFUND_POLICY` and the `CONSUMPTION_*` settings: their defaults, their values, and a wrong
/// value named by its variable.
@Suite struct AppConfigWalletTests {
  let base = [
    "DATABASE_URL": "postgresql://u@127.0.0.1:5432/db", "APPLE_BUNDLE_ID": "com.example.app",
    "APP_AUTH": "none", "APPLE_APP_APPLE_ID": "1234567890",
  ]

  func variable(_ overrides: [String: String]) -> String? {
    do {
      _ = try AppConfig.fromEnvironment(base.merging(overrides) { $1 })
      return nil
    } catch let error as ConfigError {
      return error.variable
    } catch {
      return "\(error)"
    }
  }

  @Test func readsDefaultsAndValues() throws {
    let defaults = try AppConfig.fromEnvironment(base)
    #expect(defaults.refundPolicy == .debt)
    #expect(defaults.consumption == ConsumptionPolicy())
    #expect(defaults.consumptionRetryBaseMs == 30_000)
    let set = try AppConfig.fromEnvironment(
      base.merging([
        "REFUND_POLICY": "negative", "CONSUMPTION_REFUND_PREFERENCE": "by_consumption",
        "CONSUMPTION_SAMPLE_CONTENT_PROVIDED": "true", "CONSUMPTION_RETRY_BASE": "2s",
        // Answers go through the Server API: the settings need its key.
        "APPLE_API_KEY_FILE": "/dev/null", "APPLE_API_KEY_ID": "ABC123DEFG",
        "APPLE_API_ISSUER_ID": "57246542-96fe-1a63-e053-0824d011072a",
      ]) { $1 })
    #expect(set.refundPolicy == .negative)
    #expect(
      set.consumption
        == ConsumptionPolicy(refundPreference: .byConsumption, sampleContentProvided: true))
    #expect(set.consumptionRetryBaseMs == 2000)
  }

  @Test func namesTheVariableThatIsWrong() {
    #expect(variable(["REFUND_POLICY": "forgive"]) == "REFUND_POLICY")
    #expect(variable(["CONSUMPTION_REFUND_PREFERENCE": "maybe"]) == "CONSUMPTION_REFUND_PREFERENCE")
    #expect(
      variable(["CONSUMPTION_SAMPLE_CONTENT_PROVIDED": "yes"])
        == "CONSUMPTION_SAMPLE_CONTENT_PROVIDED")
    #expect(variable(["CONSUMPTION_RETRY_BASE": "soon"]) == "CONSUMPTION_RETRY_BASE")
  }
}
