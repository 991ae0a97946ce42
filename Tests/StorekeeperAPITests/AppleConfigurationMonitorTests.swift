import AppStore
import Foundation
import StorekeeperLogging
import StorekeeperTestSupport
import Testing

@testable import StorekeeperAPI
@testable import StorekeeperCore

@Suite struct AppleConfigurationMonitorTests {
  static let secret = Misconfiguration(
    setting: .sharedSecret, status: 21004, environment: "Production")

  @Test func logsASettingAtMostOnceAMinuteAndCountsEveryAnswer() {
    let clock = ManualClock()
    let monitor = AppleConfigurationMonitor(
      logger: Logger(label: "test", level: .critical), clock: clock.clock)
    #expect(monitor.record(Self.secret))
    clock.advance(by: 30)
    #expect(!monitor.record(Self.secret))
    clock.advance(by: 29)
    #expect(!monitor.record(Self.secret))
    clock.advance(by: 2)
    #expect(monitor.record(Self.secret))
    #expect(monitor.current.map(\.count) == [4])
    #expect(monitor.totals.map(\.count) == [4])
    #expect(Self.secret.setting.variable == "APPLE_SHARED_SECRET")
  }

  /// A clock moved back does not silence the error for the length of the step.
  @Test func aClockMovedBackLogsAgainAtOnce() {
    let clock = ManualClock()
    let monitor = AppleConfigurationMonitor(
      logger: Logger(label: "test", level: .critical), clock: clock.clock)
    #expect(monitor.record(Self.secret))
    clock.advance(by: -600)
    #expect(monitor.record(Self.secret))
    clock.advance(by: 30)
    #expect(!monitor.record(Self.secret))
  }

  @Test func aValidAnswerFromTheSameEndpointClearsTheProblemButNotTheCounter() {
    let monitor = AppleConfigurationMonitor(logger: Logger(label: "test", level: .critical))
    monitor.record(Self.secret)
    monitor.resolved(environment: "Sandbox", settings: [.sharedSecret])
    #expect(monitor.current.count == 1)
    monitor.resolved(environment: "Production", settings: [.sharedSecret])
    #expect(monitor.current.isEmpty)
    #expect(monitor.totals.map(\.count) == [1])
  }

  @Test func readinessNamesTheVariableAndIsOmittedWhenAllIsWell() throws {
    let monitor = AppleConfigurationMonitor(logger: Logger(label: "test", level: .critical))
    #expect(
      try JSONCoding.text(Readiness(monitor.current))
        == #"{"status":"ready","version":"\#(BuildInfo.version)"}"#)
    monitor.record(Self.secret)
    let text = try JSONCoding.text(Readiness(monitor.current))
    #expect(text.contains(#""setting":"APPLE_SHARED_SECRET""#))
    #expect(text.contains(#""apple_status":21004"#))
    #expect(text.contains(#""status":"ready""#))
  }
}
