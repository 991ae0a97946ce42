import Synchronization

/// What tests may change about the fake's App Store Server API while it runs, and what it
/// counts: how many transactions a history page holds (Apple does not say; tests shorten it
/// to see pagination), and how often each of Apple's endpoints was called (so a test can prove
/// a receipt was judged without verifyReceipt).
final class FakeServerAPIControls: Sendable {
  enum Endpoint: String, Sendable, CaseIterable {
    case verifyReceipt = "verify_receipt"
    case transactionInfo = "transaction_info"
    case transactionHistory = "transaction_history"
  }

  static let pageSizes = 1...200

  private struct State {
    var historyPageSize: Int
    var calls: [Endpoint: Int] = [:]
  }

  private let state: Mutex<State>

  init(historyPageSize: Int) {
    state = Mutex(State(historyPageSize: historyPageSize))
  }

  var historyPageSize: Int {
    get { state.withLock { $0.historyPageSize } }
    set { state.withLock { $0.historyPageSize = newValue } }
  }

  func count(_ endpoint: Endpoint) { state.withLock { $0.calls[endpoint, default: 0] += 1 } }

  var calls: [String: Int] {
    state.withLock { state in
      Dictionary(
        uniqueKeysWithValues: Endpoint.allCases.map { ($0.rawValue, state.calls[$0] ?? 0) })
    }
  }
}
