import Synchronization

/// What the fake's Send Consumption Information endpoint received, for tests to read
/// (`GET /fake/v1/consumption/{transaction_id}`), and the failures they asked it to answer
/// with first or how long to hold each call (`POST /fake/v1/consumption/faults`).
final class FakeConsumptionLog: Sendable {
  /// One call as received: its body, its environment and the status answered.
  struct Call: Sendable {
    var transactionId: String
    var environment: String
    var body: String
    var status: Int
    var error: String?
  }

  private struct State {
    var calls: [Call] = []
    var failures: [Int] = []
    var holdMilliseconds = 0
  }

  private let state = Mutex(State())

  /// The status the next call is to fail with, if a test set one.
  func takeFailure() -> Int? {
    state.withLock { $0.failures.isEmpty ? nil : $0.failures.removeFirst() }
  }

  func fail(next count: Int, status: Int) {
    state.withLock { $0.failures = Array(repeating: status, count: count) }
  }

  /// How long each call is held before it is answered: a slow Apple.
  var holdMilliseconds: Int {
    get { state.withLock { $0.holdMilliseconds } }
    set { state.withLock { $0.holdMilliseconds = newValue } }
  }

  func record(_ call: Call) { state.withLock { $0.calls.append(call) } }

  func calls(transactionId: String) -> [Call] {
    state.withLock { $0.calls.filter { $0.transactionId == transactionId } }
  }
}
