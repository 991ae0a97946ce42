import Testing

@testable import StorekeeperCore

/// Waiting at most so long for work that may never end.
@Suite struct BoundedWaitTests {
  @Test func workThatEndsInTimeGivesItsValue() async {
    let value = await BoundedWait.value(within: .seconds(60), else: 0) { 42 }
    #expect(value == 42)
    #expect(await BoundedWait.finish(within: .seconds(60)) {})
  }

  @Test func workThatDoesNotEndGivesTheFallbackAtTheLimit() async {
    // Longer than the test run: the work hangs as a statement to a stopped database does.
    let hang: @Sendable () async -> Int = {
      try? await Task.sleep(for: .seconds(3600))
      return 1
    }
    #expect(await BoundedWait.value(within: .milliseconds(50), else: -1, hang) == -1)
    #expect(
      await BoundedWait.finish(within: .milliseconds(50)) { _ = await hang() } == false)
  }
}
