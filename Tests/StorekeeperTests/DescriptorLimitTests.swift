import Foundation
import Testing

@testable import Storekeeper

#if canImport(Glibc)
  import Glibc
#endif

/// `MAX_CONNECTIONS` against the descriptor limit: a shell's soft limit (1,024) is far below
/// the default cap, so connections past it were reset instead of idle ones evicted.
@Suite(.serialized) struct DescriptorLimitTests {
  @Test func theSoftLimitIsRaisedToTheHardOne() throws {
    let before = try #require(DescriptorLimit.current())
    let target = before.hard == UInt64(rlim_t.max) ? before.soft : before.hard
    // One below the ceiling, as a shell's lower soft limit would be (harmless to this process).
    var lowered = rlimit(rlim_cur: rlim_t(target - 1), rlim_max: rlim_t(before.hard))
    #expect(setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &lowered) == 0)
    #expect(DescriptorLimit.current()?.soft == target - 1)
    let after = try #require(DescriptorLimit.raise())
    #expect(after.soft >= target && DescriptorLimit.current()?.soft == after.soft)
  }

  @Test func whatIsNeededCountsEveryListenerThePoolsAndTheOutboundCalls() {
    var config = AppConfig(databaseURL: "postgresql://u@h/db", bundleId: "com.example.app")
    let defaults = DescriptorLimit.needed(config)
    #expect(defaults == 10_000 + 10 + 5 + 2 + 8 + 8 + 32 + DescriptorLimit.margin)
    config.adminPort = 9090
    #expect(DescriptorLimit.needed(config) == defaults + 10_000)
    config.maxConnections = 100
    #expect(DescriptorLimit.needed(config) == defaults - 10_000 + 200)
  }
}
