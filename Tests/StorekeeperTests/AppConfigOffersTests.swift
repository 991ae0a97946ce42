import Testing

@testable import Storekeeper
@testable import StorekeeperAPI
@testable import StorekeeperCore

/// The promotional offer key: a dedicated pair, else the App Store Server API key, else none.
@Suite struct AppConfigOffersTests {
  let base = [
    "DATABASE_URL": "postgresql://u@127.0.0.1:5432/db", "APPLE_BUNDLE_ID": "com.example.app",
    "APP_AUTH": "none", "APPLE_APP_APPLE_ID": "1234567890",
  ]
  let api = [
    "APPLE_API_KEY_FILE": "/keys/api.p8", "APPLE_API_KEY_ID": "APIKEY0001",
    "APPLE_API_ISSUER_ID": "57246542-96fe-1a63-e053-0824d011072a",
  ]

  @Test func offersAreForSubscribersUnlessTheAppDecides() throws {
    #expect(try AppConfig.fromEnvironment(base).offerEligibility == .subscribers)
    var env = base
    env["OFFER_ELIGIBILITY"] = "anyone"
    #expect(try AppConfig.fromEnvironment(env).offerEligibility == .anyone)
    env["OFFER_ELIGIBILITY"] = "everyone"
    #expect(throws: ConfigError.self) { try AppConfig.fromEnvironment(env) }
  }

  @Test func offersAreOffWithoutAnyKey() throws {
    #expect(try AppConfig.fromEnvironment(base).offerKey == nil)
  }

  @Test func theAPIKeySignsOffersWhenNoOfferKeyIsSet() throws {
    let key = try #require(try AppConfig.fromEnvironment(base.merging(api) { $1 }).offerKey)
    #expect(key.path == "/keys/api.p8" && key.keyId == "APIKEY0001")
    #expect(key.variable == "APPLE_API_KEY_FILE")
  }

  @Test func aDedicatedOfferKeyComesFirst() throws {
    var env = base.merging(api) { $1 }
    env["APPLE_OFFER_KEY_FILE"] = "/keys/offers.p8"
    env["APPLE_OFFER_KEY_ID"] = "OFFERKEY01"
    let key = try #require(try AppConfig.fromEnvironment(env).offerKey)
    #expect(key.path == "/keys/offers.p8" && key.keyId == "OFFERKEY01")
    #expect(key.variable == "APPLE_OFFER_KEY_FILE")
  }

  @Test func theOfferKeySettingsComeTogether() {
    for (set, missing) in [
      ("APPLE_OFFER_KEY_FILE", "APPLE_OFFER_KEY_ID"),
      ("APPLE_OFFER_KEY_ID", "APPLE_OFFER_KEY_FILE"),
    ] {
      var env = base
      env[set] = "x"
      #expect(throws: ConfigError.self) { try AppConfig.fromEnvironment(env) }
      do {
        _ = try AppConfig.fromEnvironment(env)
      } catch let error as ConfigError {
        #expect(error.variable == missing)
      } catch {
        Issue.record("unexpected \(error)")
      }
    }
  }
}
