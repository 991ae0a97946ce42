import Testing

@testable import Storekeeper
@testable import StorekeeperCore

/// `XML_PRODUCT_ID_PREFIX`: empty by default, else a product id's leading part.
@Suite struct AppConfigXMLCatalogTests {
  let base = [
    "DATABASE_URL": "postgresql://u@127.0.0.1:5432/db", "APPLE_BUNDLE_ID": "com.example.app",
    "APP_AUTH": "none", "APPLE_APP_APPLE_ID": "1234567890",
  ]

  @Test func thePrefixIsReadAndEmptyByDefault() throws {
    #expect(try AppConfig.fromEnvironment(base).xmlProductIdPrefix == "")
    var env = base
    env["XML_PRODUCT_ID_PREFIX"] = "com.beispielfirma.appname."
    #expect(try AppConfig.fromEnvironment(env).xmlProductIdPrefix == "com.beispielfirma.appname.")
  }

  @Test func aPrefixNoProductIdCouldStartWithIsRefused() {
    for bad in ["com.example app.", "com/example.", "<x>", String(repeating: "a", count: 100)] {
      var env = base
      env["XML_PRODUCT_ID_PREFIX"] = bad
      #expect(throws: ConfigError.self, "\(bad)") { try AppConfig.fromEnvironment(env) }
    }
  }
}
