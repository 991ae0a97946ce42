import Testing

@testable import Storekeeper
@testable import StorekeeperCore

/// Google Play's settings: off without a package name, all or nothing around it.
@Suite struct AppConfigGooglePlayTests {
  let base = [
    "DATABASE_URL": "postgresql://u@127.0.0.1:5432/db", "APPLE_BUNDLE_ID": "com.example.app",
    "APP_AUTH": "none", "APPLE_APP_APPLE_ID": "1234567890",
  ]

  func refusal(_ extra: [String: String]) -> String? {
    do {
      _ = try AppConfig.fromEnvironment(base.merging(extra) { $1 })
      return nil
    } catch let error as ConfigError {
      return error.variable
    } catch {
      return "\(error)"
    }
  }

  @Test func offWithoutAPackageName() throws {
    #expect(try AppConfig.fromEnvironment(base).googlePlay == nil)
  }

  @Test func theDefaultsAreGooglesOwn() throws {
    let config = try AppConfig.fromEnvironment(
      base.merging([
        "GOOGLE_PLAY_PACKAGE_NAME": "com.example.app",
        "GOOGLE_PLAY_SERVICE_ACCOUNT_FILE": "/keys/play.json",
      ]) { $1 })
    let google = try #require(config.googlePlay)
    #expect(google.apiURL == "https://androidpublisher.googleapis.com")
    #expect(google.oidcJWKSURL == "https://www.googleapis.com/oauth2/v3/certs")
    #expect(google.pubSubAudience == nil && google.pubSubServiceAccount == nil)
    #expect(google.sweepIntervalMs == 3_600_000)
  }

  @Test func everyMistakeNamesItsVariable() {
    let on = [
      "GOOGLE_PLAY_PACKAGE_NAME": "com.example.app",
      "GOOGLE_PLAY_SERVICE_ACCOUNT_FILE": "/keys/play.json",
    ]
    #expect(refusal(["GOOGLE_PLAY_SERVICE_ACCOUNT_FILE": "/k.json"]) == "GOOGLE_PLAY_PACKAGE_NAME")
    #expect(
      refusal(["GOOGLE_PLAY_PACKAGE_NAME": "com.example.app"]) == "GOOGLE_PLAY_SERVICE_ACCOUNT_FILE"
    )
    #expect(
      refusal(on.merging(["GOOGLE_PLAY_PACKAGE_NAME": "not a package"]) { $1 })
        == "GOOGLE_PLAY_PACKAGE_NAME")
    #expect(
      refusal(on.merging(["GOOGLE_PLAY_PACKAGE_NAME": "1com.example"]) { $1 })
        == "GOOGLE_PLAY_PACKAGE_NAME")
    #expect(
      refusal(on.merging(["GOOGLE_PLAY_API_URL": "http://example.com"]) { $1 })
        == "GOOGLE_PLAY_API_URL")
    #expect(
      refusal(on.merging(["GOOGLE_OIDC_JWKS_URL": "ftp://x"]) { $1 }) == "GOOGLE_OIDC_JWKS_URL")
    #expect(
      refusal(on.merging(["GOOGLE_PUBSUB_AUDIENCE": "aud"]) { $1 })
        == "GOOGLE_PUBSUB_SERVICE_ACCOUNT")
    #expect(
      refusal(
        on.merging(["GOOGLE_PUBSUB_SERVICE_ACCOUNT": "push@x.iam.gserviceaccount.com"]) { $1 })
        == "GOOGLE_PUBSUB_AUDIENCE")
    #expect(
      refusal(
        on.merging(["GOOGLE_PUBSUB_SERVICE_ACCOUNT": "nobody", "GOOGLE_PUBSUB_AUDIENCE": "a"]) {
          $1
        })
        == "GOOGLE_PUBSUB_SERVICE_ACCOUNT")
    #expect(
      refusal(on.merging(["GOOGLE_PLAY_SWEEP_INTERVAL": "often"]) { $1 })
        == "GOOGLE_PLAY_SWEEP_INTERVAL")
    #expect(refusal(on) == nil)
  }
}
