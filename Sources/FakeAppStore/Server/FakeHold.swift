import Synchronization

/// Delays that end early when the server shuts down, so a held "timeout" answer never keeps
/// shutdown waiting for its full delay.
final class FakeHold: Sendable {
  private struct State {
    var released = false
    var active = 0
    var nextId = 0
    var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
  }

  private let state = Mutex(State())

  init() {}

  /// Sleeps `milliseconds`, or less if `releaseAll()` is called or the task is cancelled.
  func wait(milliseconds: Int) async {
    state.withLock { $0.active += 1 }
    defer { state.withLock { $0.active -= 1 } }
    await withTaskGroup(of: Void.self) { group in
      group.addTask { try? await Task.sleep(for: .milliseconds(milliseconds)) }
      group.addTask { await self.untilReleased() }
      await group.next()
      group.cancelAll()
    }
  }

  /// Waits under way: requests a `timeout` fault is holding right now.
  var activeCount: Int { state.withLock { $0.active } }

  /// Ends every wait under way and every later one at once.
  func releaseAll() {
    let waiters = state.withLock { state in
      state.released = true
      let waiters = Array(state.waiters.values)
      state.waiters = [:]
      return waiters
    }
    for waiter in waiters { waiter.resume() }
  }

  private func untilReleased() async {
    let id = state.withLock { state in
      state.nextId += 1
      return state.nextId
    }
    await withTaskCancellationHandler {
      await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        let resumeNow = state.withLock { state in
          if state.released || Task.isCancelled { return true }
          state.waiters[id] = continuation
          return false
        }
        if resumeNow { continuation.resume() }
      }
    } onCancel: {
      let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
      waiter?.resume()
    }
  }
}
