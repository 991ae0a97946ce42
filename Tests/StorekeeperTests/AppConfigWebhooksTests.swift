import Testing

@testable import Storekeeper
@testable import StorekeeperAPI
@testable import StorekeeperCore

@Suite struct AppConfigWebhooksTests {
  let base = [
    "DATABASE_URL": "postgresql://u@127.0.0.1:5432/db", "APPLE_BUNDLE_ID": "com.example.app",
    "APP_AUTH": "none", "APPLE_APP_APPLE_ID": "1234567890",
  ]

  @Test func readsTheWebhookSettingsAndTheirDefaults() throws {
    let defaults = try AppConfig.fromEnvironment(base).webhooks
    #expect(defaults == WebhookSettings())
    #expect(defaults.retryBaseMs == 30_000 && defaults.retryWindowMs == 72 * 3_600_000)
    #expect(defaults.timeoutMs == 10_000 && defaults.disableAfterMs == 5 * 86_400_000)
    #expect(defaults.secretOverlapMs == 86_400_000 && defaults.leaseMs == 25_000)

    var env = base
    env["WEBHOOK_RETRY_BASE"] = "2s"
    env["WEBHOOK_RETRY_WINDOW"] = "1h"
    env["WEBHOOK_TIMEOUT"] = "3s"
    env["WEBHOOK_DISABLE_AFTER"] = "1d"
    env["WEBHOOK_SECRET_OVERLAP"] = "10m"
    env["WEBHOOK_MAX_ENDPOINTS"] = "5"
    env["WEBHOOK_CONCURRENCY_PER_ENDPOINT"] = "2"
    env["WEBHOOK_CONCURRENCY"] = "8"
    env["WEBHOOK_RETENTION"] = "7d"
    let config = try AppConfig.fromEnvironment(env).webhooks
    #expect(config.retryPolicy == RetryPolicy(baseMs: 2_000, windowMs: 3_600_000))
    #expect(config.timeoutMs == 3_000 && config.disableAfterMs == 86_400_000)
    #expect(config.secretOverlapMs == 600_000 && config.maxEndpoints == 5)
    #expect(config.concurrencyPerEndpoint == 2 && config.concurrency == 8)
    #expect(config.retentionMs == 7 * 86_400_000)
  }

  @Test func namesTheSettingThatIsWrong() {
    for (name, value) in [
      ("WEBHOOK_RETRY_BASE", "soon"), ("WEBHOOK_TIMEOUT", "2m"), ("WEBHOOK_MAX_ENDPOINTS", "0"),
      ("WEBHOOK_CONCURRENCY", "-1"), ("WEBHOOK_SECRET_OVERLAP", "0s"),
    ] {
      var env = base
      env[name] = value
      do {
        _ = try AppConfig.fromEnvironment(env)
        Issue.record("\(name)=\(value) was accepted")
      } catch let error as ConfigError {
        #expect(error.variable == name)
      } catch {
        Issue.record("unexpected \(error)")
      }
    }
  }
}
