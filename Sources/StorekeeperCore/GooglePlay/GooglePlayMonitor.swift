import StorekeeperLogging
import Synchronization

/// Whether Google takes this server's service account: a 401/403 (or a key that cannot sign)
/// keeps every Google report pending, so the operator hears of it in the log (an error at most
/// once a minute, naming `GOOGLE_PLAY_SERVICE_ACCOUNT_FILE`), `/metrics` and `/readyz`. In
/// memory, like `AppleConfigurationMonitor`: the key file is per instance. A purchase Google
/// answers for clears it.
package final class GooglePlayMonitor: Sendable {
  package static let variable = "GOOGLE_PLAY_SERVICE_ACCOUNT_FILE"

  package struct Problem: Sendable, Equatable {
    package var detail: String
    package var firstSeenMs: Int64
    package var count: Int64
  }

  private struct State: Sendable {
    var current: Problem?
    var total: Int64 = 0
    var lastLoggedMs: Int64?
  }

  static let logIntervalMs: Int64 = 60_000
  private let state = Mutex(State())
  private let logger: Logger
  private let clock: WallClock

  package init(logger: Logger, clock: WallClock) {
    self.logger = logger
    self.clock = clock
  }

  func record(_ detail: String) {
    let now = clock.milliseconds
    let log = state.withLock { state -> Bool in
      state.total += 1
      var problem = state.current ?? Problem(detail: detail, firstSeenMs: now, count: 0)
      problem.detail = detail
      problem.count += 1
      state.current = problem
      if let last = state.lastLoggedMs,
        !WallClock.isDue(nowMs: now, lastMs: last, intervalMs: Self.logIntervalMs)
      {
        return false
      }
      state.lastLoggedMs = now
      return true
    }
    guard log else { return }
    logger.error(
      "Google Play refuses this server's service account: check \(Self.variable) and the account's access in Play Console; Google reports wait until it is fixed",
      ["setting": .string(Self.variable), "detail": .string(String(detail.prefix(300)))])
  }

  func resolved() {
    state.withLock { $0.current = nil }
  }

  /// A purchase Google charged for whose quantity no order may hold (more than 10 units): it
  /// is refused, so never credited, acknowledged nor consumed, and Google refunds it after
  /// three days. Logged as an error each time it is refused, and counted for `/metrics`.
  func uncreditable(orderId: String, quantity: Int, tradeNo: String?) {
    uncreditableCount.withLock { $0 += 1 }
    var fields: [String: LogValue] = ["order_id": .string(orderId), "quantity": .int(quantity)]
    if let tradeNo { fields["trade_no"] = .string(tradeNo) }
    logger.error(
      "Google Play purchase refused: its quantity is more than an order holds; it is not credited and Google refunds it after three days",
      fields)
  }

  private let uncreditableCount = Mutex<Int64>(0)
  /// Purchases refused since start for a quantity no order holds (each refusal counted).
  package var uncreditableTotal: Int64 { uncreditableCount.withLock { $0 } }

  package var current: Problem? { state.withLock { $0.current } }
  /// Refused calls since start, for a counter that never goes down.
  package var total: Int64 { state.withLock { $0.total } }
}
