import Foundation
import StorekeeperCore

/// What an operator must hear of Google Play, for `/readyz` and `/metrics`: whether Google
/// takes the service account (this instance's memory), and the acknowledgement and price
/// backlogs (the database's, shared by every instance). None makes the instance unready: taking
/// it out of rotation would fix none of them.
package struct GooglePlayHealth: Sendable {
  let monitor: GooglePlayMonitor
  let queue: GoogleAcknowledgementQueue
  /// The orders still waiting for `orders.get` to price them.
  let prices: GoogleOrderPrices?
  /// The voided purchases sweep, for the voids it could match to no credited purchase.
  let sweeps: GoogleSweeps?
  /// The time the oldest purchase's age is counted to: the domain's (PostgreSQL's in `serve`).
  let clock: WallClock

  package init(
    monitor: GooglePlayMonitor, queue: GoogleAcknowledgementQueue,
    prices: GoogleOrderPrices? = nil, sweeps: GoogleSweeps? = nil, clock: WallClock
  ) {
    self.clock = clock
    self.monitor = monitor
    self.queue = queue
    self.prices = prices
    self.sweeps = sweeps
  }

  func problems(nowMs: Int64) async -> [Readiness.Problem] {
    let formatter = ISO8601DateFormatter()
    func since(_ ms: Int64) -> String {
      formatter.string(from: Date(timeIntervalSince1970: Double(ms) / 1000))
    }
    var problems: [Readiness.Problem] = []
    if let refused = monitor.current {
      problems.append(
        Readiness.Problem(
          code: "google_play_configuration", setting: GooglePlayMonitor.variable,
          detail: "Google Play refuses this server's service account (\(refused.detail)): check "
            + "\(GooglePlayMonitor.variable) and the account's access in Play Console; Google "
            + "reports wait until it is fixed",
          since: since(refused.firstSeenMs), count: refused.count))
    }
    if let backlog = try? await queue.backlog(), backlog.overdue > 0,
      let oldest = backlog.oldestPurchaseMs
    {
      let hoursLeft = max(
        0, (oldest + GoogleAcknowledgementQueue.refundAfterMs - nowMs) / 3_600_000)
      problems.append(
        Readiness.Problem(
          code: "google_acknowledgements_overdue",
          detail: "\(backlog.overdue) Google Play purchase(s) credited but not acknowledged a "
            + "day after purchase; Google refunds the oldest in about \(hoursLeft) h"
            + (backlog.lastError.map { " (last error: \($0.prefix(200)))" } ?? ""),
          since: since(oldest), count: backlog.overdue))
    }
    if let prices, let backlog = try? await prices.backlog(), let problem = Self.pricing(backlog) {
      problems.append(problem)
    }
    return problems
  }

  /// Orders `orders.get` failed to price and that still wait for it (a 5xx, a quota, a refused
  /// account), from the first failure until Google prices them. `since` is when the oldest was
  /// credited. A refused account is named: the Orders API needs "View financial data", which
  /// an account that may read purchases can lack, so Google's other answers never clear it.
  static func pricing(_ backlog: GoogleOrderPrices.Backlog) -> Readiness.Problem? {
    guard backlog.failing > 0, let oldest = backlog.oldestFailingMs else { return nil }
    let error = backlog.lastError ?? ""
    var detail =
      "\(backlog.failing) credited Google Play order(s) whose price orders.get failed to give; "
      + "retried with backoff, charts count them at the plan's price or none until then"
      + " (oldest's last error: \(error.prefix(200)))"
    let refused = error.hasPrefix("google_credentials_refused")
    if refused {
      detail +=
        ": give the service account \"View financial data\" in Play Console "
        + "(\(GooglePlayMonitor.variable))"
    }
    return Readiness.Problem(
      code: "google_order_prices_failing", setting: refused ? GooglePlayMonitor.variable : nil,
      detail: detail,
      since: ISO8601DateFormatter().string(
        from: Date(timeIntervalSince1970: Double(oldest) / 1000)),
      count: backlog.failing)
  }

  func lines(nowMs: Int64) async -> [String] {
    var lines = [
      "# HELP storekeeper_google_play_configuration_errors 1 while Google Play refuses this "
        + "instance's service account (Google reports wait until it is fixed).",
      "# TYPE storekeeper_google_play_configuration_errors gauge",
      "storekeeper_google_play_configuration_errors{setting=\"\(GooglePlayMonitor.variable)\"} "
        + (monitor.current == nil ? "0" : "1"),
      "# HELP storekeeper_google_play_configuration_errors_total Google Play calls since start "
        + "that refused this instance's service account.",
      "# TYPE storekeeper_google_play_configuration_errors_total counter",
      "storekeeper_google_play_configuration_errors_total{setting=\"\(GooglePlayMonitor.variable)\"} "
        + "\(monitor.total)",
      "# HELP storekeeper_google_purchases_uncreditable_total Google Play purchases refused "
        + "since start because their quantity is more than an order holds (Google charged for "
        + "them and refunds them after three days), each refusal counted.",
      "# TYPE storekeeper_google_purchases_uncreditable_total counter",
      "storekeeper_google_purchases_uncreditable_total \(monitor.uncreditableTotal)",
    ]
    if let prices, let due = try? await prices.backlog() {
      lines += [
        "# HELP storekeeper_google_order_prices_due Google orders credited whose price the "
          + "Orders API has not given yet (charts count them at the plan's price or none).",
        "# TYPE storekeeper_google_order_prices_due gauge",
        "storekeeper_google_order_prices_due \(due.due)",
        "# HELP storekeeper_google_order_prices_failing Of those, the ones orders.get failed "
          + "for at least once (retried with backoff).",
        "# TYPE storekeeper_google_order_prices_failing gauge",
        "storekeeper_google_order_prices_failing \(due.failing)",
      ]
    }
    if let sweeps, let unmatched = try? await sweeps.unmatchedVoids() {
      lines += [
        "# HELP storekeeper_google_unmatched_voids_total Voided purchases Google listed for a "
          + "purchase token Storekeeper never credited (nothing taken back), each counted once.",
        "# TYPE storekeeper_google_unmatched_voids_total counter",
        "storekeeper_google_unmatched_voids_total \(unmatched)",
      ]
    }
    guard let backlog = try? await queue.backlog() else { return lines }
    let age = backlog.oldestPurchaseMs.map { max(0, nowMs - $0) / 1000 } ?? 0
    lines += [
      "# HELP storekeeper_google_acknowledgements_open Credited Google Play purchases not yet "
        + "acknowledged or consumed at Google.",
      "# TYPE storekeeper_google_acknowledgements_open gauge",
      "storekeeper_google_acknowledgements_open \(backlog.open)",
      "# HELP storekeeper_google_acknowledgements_overdue Of those, the ones open a day after "
        + "their purchase (Google refunds at three days).",
      "# TYPE storekeeper_google_acknowledgements_overdue gauge",
      "storekeeper_google_acknowledgements_overdue \(backlog.overdue)",
      "# HELP storekeeper_google_acknowledgement_oldest_age_seconds Age of the oldest open "
        + "acknowledgement's purchase (alert well before 259200).",
      "# TYPE storekeeper_google_acknowledgement_oldest_age_seconds gauge",
      "storekeeper_google_acknowledgement_oldest_age_seconds \(age)",
    ]
    return lines
  }
}
