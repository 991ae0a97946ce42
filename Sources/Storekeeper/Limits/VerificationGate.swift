import Synchronization

/// A concurrency cap on verifying proofs, separate from the server's in-flight limit, so a
/// flood of proofs cannot take the slots that notifications, admins and the catalog need.
/// Two lanes: signed transactions are checked offline and cost CPU (`VERIFY_CONCURRENCY`);
/// receipts wait on Apple's `verifyReceipt` for up to `APPLE_TIMEOUT`
/// (`VERIFY_RECEIPT_CONCURRENCY`). Requests only try (`tryEnter`) and are answered 503 at once
/// when their lane is full; the retry worker waits for a slot (`enter`), since nobody waits on
/// it.
final class VerificationGate: Sendable {
  enum Lane: Int, Sendable {
    case offline = 0
    case apple = 1

    init(_ kind: Proof.Kind) { self = kind == .signedTransaction ? .offline : .apple }
  }

  /// For tests and tools that build services without a configuration.
  static let unbounded = VerificationGate(offline: Int.max / 2, apple: Int.max / 2)

  let limits: [Int]
  private let state: Mutex<State>

  private struct State: ~Copyable {
    var inUse = [0, 0]
    var waiters: [[CheckedContinuation<Void, Never>]] = [[], []]
  }

  init(offline: Int, apple: Int) {
    limits = [max(1, offline), max(1, apple)]
    state = Mutex(State())
  }

  func tryEnter(_ lane: Lane) -> Bool {
    state.withLock { state in
      guard state.inUse[lane.rawValue] < limits[lane.rawValue] else { return false }
      state.inUse[lane.rawValue] += 1
      return true
    }
  }

  /// Waits for a slot. Every holder leaves (verification is bounded by `APPLE_TIMEOUT`), so
  /// the wait ends; it is not cancellable, and only background work uses it.
  func enter(_ lane: Lane) async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      let admitted = state.withLock { state in
        if state.inUse[lane.rawValue] < limits[lane.rawValue] {
          state.inUse[lane.rawValue] += 1
          return true
        }
        state.waiters[lane.rawValue].append(continuation)
        return false
      }
      if admitted { continuation.resume() }
    }
  }

  /// Gives the slot to the first waiter, if any, else frees it.
  func leave(_ lane: Lane) {
    let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
      if !state.waiters[lane.rawValue].isEmpty {
        return state.waiters[lane.rawValue].removeFirst()
      }
      state.inUse[lane.rawValue] -= 1
      return nil
    }
    next?.resume()
  }

  func inUse(_ lane: Lane) -> Int { state.withLock { $0.inUse[lane.rawValue] } }

  /// Runs `body` holding a slot of `proof`'s lane, or refuses at once when the lane is full.
  func withSlot<T>(for kind: Proof.Kind, _ body: () async throws -> T) async throws -> T {
    let lane = Lane(kind)
    guard tryEnter(lane) else { throw VerificationBusy(lane: lane) }
    defer { leave(lane) }
    return try await body()
  }

  /// Runs `body` holding a slot, waiting for one as long as it takes.
  func waitingForSlot<T>(for kind: Proof.Kind, _ body: () async throws -> T) async rethrows -> T {
    let lane = Lane(kind)
    await enter(lane)
    defer { leave(lane) }
    return try await body()
  }
}

/// Too many proofs are being verified right now; the client should retry shortly.
struct VerificationBusy: Error, Equatable, Sendable {
  var lane: VerificationGate.Lane
}
