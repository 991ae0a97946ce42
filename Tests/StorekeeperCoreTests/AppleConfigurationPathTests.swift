import AppStore
import StorekeeperLogging
import Testing

@testable import StorekeeperCore

/// Two of Apple's paths, two sets of settings: a valid answer through one clears only its own
/// problems, so a working Server API key does not hide a wrong shared secret (and back).
@Suite struct AppleConfigurationPathTests {
  @Test func aValidAnswerClearsOnlyThePathThatGaveIt() {
    let monitor = AppleConfigurationMonitor(logger: Logger(label: "test", level: .critical))
    let secret = Misconfiguration(setting: .sharedSecret, status: 21004, environment: "Production")
    let key = Misconfiguration(setting: .apiKey, status: 401, environment: "Production")
    monitor.record(secret)
    monitor.record(key)
    #expect(key.reason == "server_api_401" && secret.reason == "verify_receipt_21004")
    #expect(key.setting.variable == "APPLE_API_KEY_ID")

    monitor.resolved(environment: "Sandbox", settings: [.apiKey])
    #expect(monitor.current.count == 2)
    monitor.resolved(environment: "Production", settings: [.apiKey])
    #expect(monitor.current.map(\.misconfiguration) == [secret])
    monitor.resolved(environment: "Production", settings: [])
    #expect(monitor.current.map(\.misconfiguration) == [secret])
    monitor.resolved(environment: "Production", settings: [.sharedSecret])
    #expect(monitor.current.isEmpty)
  }
}
