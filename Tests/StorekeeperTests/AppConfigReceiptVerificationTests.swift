import Testing

@testable import Storekeeper
@testable import StorekeeperAPI
@testable import StorekeeperCore

/// `APPLE_RECEIPT_VERIFICATION`: which of Apple's paths judges a StoreKit 1 receipt, checked at
/// start-up.
@Suite struct AppConfigReceiptVerificationTests {
  let base = [
    "DATABASE_URL": "postgresql://u@127.0.0.1:5432/db", "APPLE_BUNDLE_ID": "com.example.app",
    "APP_AUTH": "none", "APPLE_APP_APPLE_ID": "1234567890",
  ]
  let api = [
    "APPLE_API_KEY_FILE": "/keys/api.p8", "APPLE_API_KEY_ID": "APIKEY0001",
    "APPLE_API_ISSUER_ID": "57246542-96fe-1a63-e053-0824d011072a",
  ]

  @Test func autoPrefersTheServerAPIOnlyWithAKey() throws {
    let bare = try AppConfig.fromEnvironment(base)
    #expect(bare.receiptVerification == .auto && !bare.receiptsUseServerAPI)
    let keyed = try AppConfig.fromEnvironment(base.merging(api) { $1 })
    #expect(keyed.receiptVerification == .auto && keyed.receiptsUseServerAPI)
    #expect(keyed.apiSandboxURL == "https://api.storekit-sandbox.apple.com")
  }

  @Test func eachModeIsRead() throws {
    var env = base.merging(api) { $1 }
    env["APPLE_RECEIPT_VERIFICATION"] = "verify_receipt"
    #expect(!(try AppConfig.fromEnvironment(env).receiptsUseServerAPI))
    env["APPLE_RECEIPT_VERIFICATION"] = "SERVER_API"
    let server = try AppConfig.fromEnvironment(env)
    #expect(server.receiptVerification == .serverAPI && server.receiptsUseServerAPI)
  }

  @Test func anUnknownModeOrServerAPIWithoutAKeyStopsStartUp() {
    for env in [
      base.merging(["APPLE_RECEIPT_VERIFICATION": "sometimes"]) { $1 },
      base.merging(["APPLE_RECEIPT_VERIFICATION": "server_api"]) { $1 },
    ] {
      #expect(throws: ConfigError.self) { try AppConfig.fromEnvironment(env) }
      do {
        _ = try AppConfig.fromEnvironment(env)
      } catch let error as ConfigError {
        #expect(error.variable == "APPLE_RECEIPT_VERIFICATION")
      } catch {
        Issue.record("unexpected \(error)")
      }
    }
  }

  @Test func theSandboxURLMustBeHTTPS() {
    var env = base.merging(api) { $1 }
    env["APPLE_API_SANDBOX_URL"] = "http://sandbox.example"
    #expect(throws: ConfigError.self) { try AppConfig.fromEnvironment(env) }
    env["APPLE_API_SANDBOX_URL"] = "https://sandbox.example"
    #expect((try? AppConfig.fromEnvironment(env))?.apiSandboxURL == "https://sandbox.example")
  }
}
