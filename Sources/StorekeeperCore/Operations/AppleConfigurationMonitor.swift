import AppStore
import StorekeeperLogging
import Synchronization

/// What verifyReceipt says about this instance's own Apple settings: a wrong shared secret or
/// URL keeps customers' receipts pending, so the operator must hear of it — in the log (an
/// error at most once a minute per setting, naming the variable), in `/metrics` and in
/// `/readyz`. Kept in memory: settings are per instance, so is the truth about them. A valid
/// answer from the same endpoint clears the problem.
package final class AppleConfigurationMonitor: Sendable {
  /// A problem as it stands: since when, how often.
  package struct Problem: Sendable, Equatable {
    package var misconfiguration: Misconfiguration
    package var firstSeenMs: Int64
    var lastSeenMs: Int64
    package var count: Int64
  }

  private struct State: Sendable {
    var current: [Misconfiguration: Problem] = [:]
    /// Every misconfigured answer since start, for a counter that never goes down.
    var totals: [Misconfiguration: Int64] = [:]
    var lastLoggedMs: [Misconfiguration.Setting: Int64] = [:]
  }

  static let logIntervalMs: Int64 = 60_000

  private let state = Mutex(State())
  private let logger: Logger
  private let clock: WallClock

  package init(logger: Logger, clock: WallClock = .system) {
    self.logger = logger
    self.clock = clock
  }

  /// Records a misconfigured answer; logs it unless its setting was logged within a minute.
  /// Returns whether it logged.
  @discardableResult func record(_ misconfiguration: Misconfiguration) -> Bool {
    let now = clock.milliseconds
    let shouldLog = state.withLock { state in
      state.totals[misconfiguration, default: 0] += 1
      var problem =
        state.current[misconfiguration]
        ?? Problem(misconfiguration: misconfiguration, firstSeenMs: now, lastSeenMs: now, count: 0)
      problem.lastSeenMs = now
      problem.count += 1
      state.current[misconfiguration] = problem
      let setting = misconfiguration.setting
      if let last = state.lastLoggedMs[setting],
        !WallClock.isDue(nowMs: now, lastMs: last, intervalMs: Self.logIntervalMs)
      {
        return false
      }
      state.lastLoggedMs[setting] = now
      return true
    }
    guard shouldLog else { return false }
    let variable = misconfiguration.setting.variable
    logger.error(
      "\(misconfiguration.setting.service) blames this server's configuration: check \(variable); what needs it waits until it is fixed",
      [
        "setting": .string(variable), "apple_status": .int(misconfiguration.status),
        "environment": .string(misconfiguration.environment),
      ])
    return true
  }

  /// One of Apple's paths answered at this endpoint: what was wrong with that path's settings
  /// there is fixed; the other path's problems stand.
  func resolved(environment: String, settings: Set<Misconfiguration.Setting>) {
    state.withLock { state in
      state.current = state.current.filter {
        $0.key.environment != environment || !settings.contains($0.key.setting)
      }
    }
  }

  /// Apple accepted the setting again (the App Store Server API took the key).
  func resolved(setting: Misconfiguration.Setting) {
    state.withLock { state in state.current = state.current.filter { $0.key.setting != setting } }
  }

  /// Problems not yet resolved, in a stable order.
  package var current: [Problem] {
    state.withLock { Array($0.current.values) }.sorted {
      Self.key($0.misconfiguration) < Self.key($1.misconfiguration)
    }
  }

  /// Misconfigured answers since start, in a stable order.
  package var totals: [(misconfiguration: Misconfiguration, count: Int64)] {
    state.withLock { $0.totals.map { ($0.key, $0.value) } }.sorted {
      Self.key($0.misconfiguration) < Self.key($1.misconfiguration)
    }
  }

  private static func key(_ problem: Misconfiguration) -> String {
    "\(problem.setting.rawValue) \(problem.status) \(problem.environment)"
  }
}
