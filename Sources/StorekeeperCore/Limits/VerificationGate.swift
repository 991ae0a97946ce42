import Synchronization

/// Admission to verifying proofs, apart from the server's in-flight limit, so a flood of
/// proofs cannot take what notifications, admins and the catalog need. Three lanes, and a slot
/// is held for one step only, never across database work:
/// - `cpu`: checking a signature here (a signed transaction's ES256 chain and payload, a
///   receipt's PKCS#7), `VERIFY_CONCURRENCY` at once. A request past the cap waits in a FIFO
///   queue bounded by length (`VERIFY_QUEUE_LENGTH`) and by time (`VERIFY_QUEUE_TIMEOUT`) and
///   is refused past either: a burst is a few milliseconds of work per report, so it is served
///   in turn instead of refused, and what waits is bounded.
/// - `apple`: a call to Apple (verifyReceipt, the App Store Server API), which may take up to
///   `APPLE_TIMEOUT`; `VERIFY_RECEIPT_CONCURRENCY` at once. Requests with a user only try it:
///   one that finds it full has its proof stored already and is answered pending for the retry
///   worker, which waits for a slot (`enter`). A userless receipt post has no later channel for
///   its content, so it waits in this lane's queue, bounded like the CPU lane's
///   (`afterWaiting`); only past the timeout is it answered pending.
/// - `google`: a call to Google Play's Developer API (a report's or a restore's purchase token),
///   `GOOGLE_PLAY_CONCURRENCY` at once: requests only try it, the retry worker waits for it. A lane of its own,
///   so a slow Google (or a flood of made-up tokens) never takes the slots App Store
///   customers' receipts need.
package final class VerificationGate: Sendable {
  enum Lane: Int, Sendable, CaseIterable {
    case cpu = 0
    case apple = 1
    case google = 2
  }

  /// For tests and tools that build services without a configuration.
  static let unbounded = VerificationGate(cpu: Int.max / 2, apple: Int.max / 2, google: Int.max / 2)

  let limits: [Int]
  /// Requests that may wait for a slot of a lane; 0 refuses at once.
  let queueLength: Int
  /// How long a request waits in the queue before it is refused.
  let queueTimeout: Duration
  private let state: Mutex<State>

  /// What a lane's queue did since start, for `/metrics`.
  struct Counts: Sendable, Equatable {
    /// Requests that waited for their slot and got it.
    var admittedAfterWaiting = 0
    /// Refused at once: the queue was full.
    var refusedFull = 0
    /// Refused after `queueTimeout`, or when their task was cancelled.
    var refusedWaiting = 0
    /// The most requests and background work that waited at once.
    var peakWaiting = 0
  }

  private struct Waiter {
    var id: UInt64
    var continuation: CheckedContinuation<Bool, Never>
    var timer: Task<Void, Never>?
    /// Background work waits as long as it takes, outside the queue's length.
    var bounded: Bool
  }

  private struct State: ~Copyable {
    var inUse = [Int](repeating: 0, count: Lane.allCases.count)
    var waiters = [[Waiter]](repeating: [], count: Lane.allCases.count)
    var queued = [Int](repeating: 0, count: Lane.allCases.count)
    var nextId: UInt64 = 0
    var counts = [Counts](repeating: Counts(), count: Lane.allCases.count)

    mutating func remove(_ lane: Int, at index: Int) -> Waiter {
      let waiter = waiters[lane].remove(at: index)
      if waiter.bounded { queued[lane] -= 1 }
      return waiter
    }
  }

  package init(
    cpu: Int, apple: Int, google: Int, queueLength: Int = 0, queueTimeout: Duration = .seconds(1)
  ) {
    limits = [max(1, cpu), max(1, apple), max(1, google)]
    self.queueLength = max(0, queueLength)
    self.queueTimeout = queueTimeout
    state = Mutex(State())
  }

  /// What a refused request is told to wait: by then the queue it met has been served.
  var retryAfterSeconds: Int { max(1, Int((queueTimeout / .seconds(1)).rounded(.up))) }

  func tryEnter(_ lane: Lane) -> Bool {
    state.withLock { state in
      guard state.inUse[lane.rawValue] < limits[lane.rawValue] else { return false }
      state.inUse[lane.rawValue] += 1
      return true
    }
  }

  /// Takes a slot of `lane`, waiting behind earlier requests. Throws `VerificationBusy` when
  /// the queue is full, after `queueTimeout`, or when the task is cancelled: the place goes to
  /// the next in line.
  func admit(_ lane: Lane) async throws {
    let l = lane.rawValue
    let id = state.withLock { state in
      state.nextId &+= 1
      return state.nextId
    }
    let admitted = await withTaskCancellationHandler {
      await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
        let queued = state.withLock { state -> Bool? in
          if state.inUse[l] < limits[l] {
            state.inUse[l] += 1
            return nil
          }
          guard state.queued[l] < queueLength else {
            state.counts[l].refusedFull += 1
            return false
          }
          state.waiters[l].append(
            Waiter(id: id, continuation: continuation, timer: nil, bounded: true))
          state.queued[l] += 1
          state.counts[l].peakWaiting = max(state.counts[l].peakWaiting, state.waiters[l].count)
          return true
        }
        switch queued {
        case nil: continuation.resume(returning: true)
        case false?: continuation.resume(returning: false)
        case true?: startTimer(lane, id)
        }
      }
    } onCancel: {
      withdraw(lane, id)
    }
    guard admitted else { throw VerificationBusy(lane: lane, retryAfterSeconds: retryAfterSeconds) }
  }

  /// Refuses waiter `id` at its deadline, unless it left the queue before.
  private func startTimer(_ lane: Lane, _ id: UInt64) {
    let timeout = queueTimeout
    let timer = Task {
      guard (try? await Task.sleep(for: timeout)) != nil else { return }
      self.withdraw(lane, id)
    }
    let gone = state.withLock { state -> Bool in
      guard let index = state.waiters[lane.rawValue].firstIndex(where: { $0.id == id }) else {
        return true
      }
      state.waiters[lane.rawValue][index].timer = timer
      return false
    }
    // Admitted (or withdrawn) before its timer was set: the timer has nothing to do.
    if gone { timer.cancel() }
    // Cancelled before it was queued: the cancellation handler found nothing to withdraw.
    if Task.isCancelled { withdraw(lane, id) }
  }

  /// Takes waiter `id` out of the queue, if it is still there, and refuses it.
  private func withdraw(_ lane: Lane, _ id: UInt64) {
    let waiter = state.withLock { state -> Waiter? in
      guard let index = state.waiters[lane.rawValue].firstIndex(where: { $0.id == id }) else {
        return nil
      }
      state.counts[lane.rawValue].refusedWaiting += 1
      return state.remove(lane.rawValue, at: index)
    }
    waiter?.timer?.cancel()
    waiter?.continuation.resume(returning: false)
  }

  /// Waits for a slot as long as it takes, outside the queue's bounds. Every holder leaves
  /// (a CPU step is short, a store's call bounded by its timeout), so the wait ends; it is
  /// not cancellable, and only background work uses it.
  func enter(_ lane: Lane) async {
    let l = lane.rawValue
    let admitted = await withCheckedContinuation {
      (continuation: CheckedContinuation<Bool, Never>) in
      let now = state.withLock { state -> Bool in
        if state.inUse[l] < limits[l] {
          state.inUse[l] += 1
          return true
        }
        state.nextId &+= 1
        state.waiters[l].append(
          Waiter(id: state.nextId, continuation: continuation, timer: nil, bounded: false))
        state.counts[l].peakWaiting = max(state.counts[l].peakWaiting, state.waiters[l].count)
        return false
      }
      if now { continuation.resume(returning: true) }
    }
    // Only a bounded waiter is ever refused.
    assert(admitted)
  }

  /// Hands the slot to the first waiter, if any, else frees it.
  func leave(_ lane: Lane) {
    let next = state.withLock { state -> Waiter? in
      if !state.waiters[lane.rawValue].isEmpty {
        let next = state.remove(lane.rawValue, at: 0)
        if next.bounded { state.counts[lane.rawValue].admittedAfterWaiting += 1 }
        return next
      }
      state.inUse[lane.rawValue] -= 1
      return nil
    }
    next?.timer?.cancel()
    next?.continuation.resume(returning: true)
  }

  func inUse(_ lane: Lane) -> Int { state.withLock { $0.inUse[lane.rawValue] } }

  /// Requests and background work waiting for a slot of `lane`.
  func waiting(_ lane: Lane) -> Int { state.withLock { $0.waiters[lane.rawValue].count } }

  func counts(_ lane: Lane) -> Counts { state.withLock { $0.counts[lane.rawValue] } }

  /// Runs the CPU step `body` holding a slot of `lane`, after waiting in the queue for one.
  func withQueuedSlot<T>(_ lane: Lane, _ body: () throws -> T) async throws -> T {
    try await admit(lane)
    defer { leave(lane) }
    return try body()
  }

  /// Refuses at once, with `VerificationBusy` (counted as refused full), when `lane` has no
  /// free slot and no room in its queue: for a request that must know before it stores anything
  /// whether it may wait. A place is not reserved; one taken meanwhile makes `afterWaiting`
  /// answer nil.
  func requireRoom(_ lane: Lane) throws {
    let room = state.withLock { state -> Bool in
      let l = lane.rawValue
      guard state.inUse[l] >= limits[l], state.queued[l] >= queueLength else { return true }
      state.counts[l].refusedFull += 1
      return false
    }
    guard room else { throw VerificationBusy(lane: lane, retryAfterSeconds: retryAfterSeconds) }
  }

  /// Runs `body` holding a slot of `lane`, after waiting in the queue for one; nil, without
  /// running it, when the queue is full or the wait runs out (`queueTimeout`).
  func afterWaiting<T>(_ lane: Lane, _ body: () async throws -> T) async rethrows -> T? {
    do {
      try await admit(lane)
    } catch {
      return nil
    }
    defer { leave(lane) }
    return try await body()
  }

  /// Runs `body` holding a slot of `lane` if one is free now; nil, without running it, if not.
  func ifFree<T>(_ lane: Lane, _ body: () async throws -> T) async rethrows -> T? {
    guard tryEnter(lane) else { return nil }
    defer { leave(lane) }
    return try await body()
  }

  /// Runs `body` holding a slot, waiting for one as long as it takes.
  func waitingForSlot<T>(_ lane: Lane, _ body: () async throws -> T) async rethrows -> T {
    await enter(lane)
    defer { leave(lane) }
    return try await body()
  }
}
