import Synchronization

/// What tests may change about the fake's App Store Server API while it runs, and what it
/// counts: how many transactions a history page holds (Apple does not say; tests shorten it
/// to see pagination), how often each of Apple's endpoints was called (so a test can prove
/// a receipt was judged without verifyReceipt), and Apple's rate limit: the next requests
/// answered 429 with Apple's `Retry-After` (a UNIX time in milliseconds), and how many
/// requests came back to an endpoint before the instant it was told.
final class FakeServerAPIControls: Sendable {
  enum Endpoint: String, Sendable, CaseIterable {
    case verifyReceipt = "verify_receipt"
    case transactionInfo = "transaction_info"
    case transactionHistory = "transaction_history"
    case subscriptionStatuses = "subscription_statuses"
    case notificationHistory = "notification_history"
    case setAppAccountToken = "set_app_account_token"
  }

  static let pageSizes = 1...200

  private struct State {
    var historyPageSize: Int
    /// Notifications per notification history page; nil: the configured size (Apple's 20).
    var notificationHistoryPageSize: Int?
    var calls: [Endpoint: Int] = [:]
    /// Server API requests still to be answered 429, and the `Retry-After` they carry.
    var rateLimitsLeft = 0
    var retryAfterMs: Int64 = 1000
    /// They are answered Apple's retryable 404 (4040002, the account not found yet) instead.
    var accountNotFoundRetryable = false
    /// Per endpoint, the instant the last 429 told the client to wait for.
    var toldUntil: [Endpoint: Int64] = [:]
    var rateLimited = 0
    var early = 0
  }

  private let state: Mutex<State>

  init(historyPageSize: Int) {
    state = Mutex(State(historyPageSize: historyPageSize))
  }

  var historyPageSize: Int {
    get { state.withLock { $0.historyPageSize } }
    set { state.withLock { $0.historyPageSize = newValue } }
  }

  var notificationHistoryPageSize: Int? {
    get { state.withLock { $0.notificationHistoryPageSize } }
    set { state.withLock { $0.notificationHistoryPageSize = newValue } }
  }

  func count(_ endpoint: Endpoint) { state.withLock { $0.calls[endpoint, default: 0] += 1 } }

  /// The next `count` Server API requests get 429 with `Retry-After` `retryAfterMs` ahead.
  func rateLimit(count: Int, retryAfterMs: Int64, accountNotFoundRetryable: Bool = false) {
    state.withLock {
      $0.rateLimitsLeft = count
      $0.retryAfterMs = retryAfterMs
      $0.accountNotFoundRetryable = accountNotFoundRetryable
    }
  }

  /// Whether the refused requests are answered 404 4040002 rather than 429.
  var answersAccountNotFound: Bool { state.withLock { $0.accountNotFoundRetryable } }

  /// The `Retry-After` instant (ms) when this request is to be answered 429; counts a request
  /// that arrived before the instant its endpoint was last told.
  func admit(_ endpoint: Endpoint, now: Int64) -> Int64? {
    state.withLock { state in
      if let until = state.toldUntil[endpoint], now < until { state.early += 1 }
      guard state.rateLimitsLeft > 0 else { return nil }
      state.rateLimitsLeft -= 1
      state.rateLimited += 1
      let until = now + state.retryAfterMs
      state.toldUntil[endpoint] = until
      return until
    }
  }

  var calls: [String: Int] {
    state.withLock { state in
      var calls = Dictionary(
        uniqueKeysWithValues: Endpoint.allCases.map { ($0.rawValue, state.calls[$0] ?? 0) })
      calls["rate_limited"] = state.rateLimited
      calls["rate_limited_early"] = state.early
      return calls
    }
  }
}
