import Testing

@testable import Storekeeper
@testable import StorekeeperAPI
@testable import StorekeeperCore

@Suite struct AppConfigLimitsTests {
  let base = [
    "DATABASE_URL": "postgresql://u@127.0.0.1:5432/db", "APPLE_BUNDLE_ID": "com.example.app",
    "APP_AUTH": "none", "APPLE_APP_APPLE_ID": "1234567890",
  ]

  @Test func readsTheLimitsAndTheirDefaults() throws {
    let defaults = try AppConfig.fromEnvironment(base)
    #expect(defaults.rateLimitPerAddress == RateSpec(perSecond: 50, burst: 500))
    #expect(defaults.rateLimitPerUser == RateSpec(perSecond: 0.5, burst: 10))
    #expect(defaults.maxOpenOrdersPerUser == 20 && defaults.trustedProxies.isEmpty)
    #expect(defaults.proofRetentionMs == 30 * 86_400_000)
    #expect(defaults.proofBytesPerUser == RateSpec(perSecond: 16_000_000 / 3600, burst: 16_000_000))
    #expect(defaults.verifyQueueLength == 1024 && defaults.verifyQueueTimeoutMs == 5_000)
    #expect(defaults.googlePlayConcurrency == 8)

    var env = base
    env["RATE_LIMIT_PER_ADDRESS"] = "off"
    env["RATE_LIMIT_PER_USER"] = "5/min,burst=2"
    env["TRUSTED_PROXIES"] = "10.0.0.0/8, ::1"
    env["VERIFY_RECEIPT_CONCURRENCY"] = "3"
    env["GOOGLE_PLAY_CONCURRENCY"] = "2"
    env["MAX_OPEN_ORDERS_PER_USER"] = "4"
    env["PROOF_RETENTION"] = "7d"
    env["PROOF_BYTES_PER_USER"] = "4MB/min,burst=8MB"
    env["VERIFY_QUEUE_LENGTH"] = "0"
    env["VERIFY_QUEUE_TIMEOUT"] = "750ms"
    let config = try AppConfig.fromEnvironment(env)
    #expect(config.proofBytesPerUser == RateSpec(perSecond: 4_000_000 / 60, burst: 8_000_000))
    env["PROOF_BYTES_PER_USER"] = "off"
    #expect(try AppConfig.fromEnvironment(env).proofBytesPerUser == nil)
    #expect(config.rateLimitPerAddress == nil)
    #expect(config.rateLimitPerUser?.burst == 2)
    #expect(config.trustedProxies.count == 2)
    #expect(config.verifyReceiptConcurrency == 3 && config.maxOpenOrdersPerUser == 4)
    #expect(config.googlePlayConcurrency == 2)
    #expect(config.proofRetentionMs == 7 * 86_400_000)
    #expect(config.verifyQueueLength == 0 && config.verifyQueueTimeoutMs == 750)
  }

  @Test func readsHowLongAnOrderWaitsForABatch() throws {
    #expect(try AppConfig.fromEnvironment(base).orderQueueTimeoutMs == 5_000)
    var env = base
    env["ORDER_QUEUE_TIMEOUT"] = "300ms"
    #expect(try AppConfig.fromEnvironment(env).orderQueueTimeoutMs == 300)
    for value in ["61s", "0s", "soon"] {
      env["ORDER_QUEUE_TIMEOUT"] = value
      let error = try #require(throws: ConfigError.self) { try AppConfig.fromEnvironment(env) }
      #expect(error.variable == "ORDER_QUEUE_TIMEOUT")
    }
  }

  @Test func namesTheLimitThatIsWrong() {
    for (name, value) in [
      ("RATE_LIMIT_PER_ADDRESS", "lots"), ("RATE_LIMIT_PER_USER", "5/week"),
      ("TRUSTED_PROXIES", "10.0.0.0/99"), ("TRUSTED_PROXIES", "0.0.0.0/0"),
      ("TRUSTED_PROXIES", "10.0.0.1, ::/0"), ("TRUSTED_PROXIES", "128.0.0.0/1"),
      ("VERIFY_CONCURRENCY", "0"), ("GOOGLE_PLAY_CONCURRENCY", "0"),
      ("GOOGLE_PLAY_CONCURRENCY", "4097"),
      ("MAX_OPEN_ORDERS_PER_USER", "-1"), ("PROOF_RETENTION", "soon"),
      ("PROOF_BYTES_PER_USER", "16MB"), ("VERIFY_QUEUE_LENGTH", "-1"),
      ("VERIFY_QUEUE_TIMEOUT", "61s"), ("VERIFY_QUEUE_TIMEOUT", "0s"),
    ] {
      var env = base
      env[name] = value
      #expect(throws: ConfigError.self) { try AppConfig.fromEnvironment(env) }
      do {
        _ = try AppConfig.fromEnvironment(env)
      } catch let error as ConfigError {
        #expect(error.variable == name)
      } catch {
        Issue.record("unexpected \(error)")
      }
    }
  }
}
