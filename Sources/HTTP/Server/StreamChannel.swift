import Synchronization

/// The hand-over between a streamed body's producer (the handler's task) and the event loop
/// that writes it. The producer queues pieces here and waits while the queued bytes plus what
/// the loop still holds unsent exceed `bound`; the loop takes the pieces when it has room,
/// reports what it holds after each step, and that report lets the producer go on. So a
/// stream holds at most `bound` plus one piece in memory, whatever its size or its reader.
final class StreamChannel: Sendable {
  enum End {
    /// The producer returned: the last chunk may be written.
    case finished
    /// The producer threw after the head went out: the body is cut short.
    case failed(String)
  }

  private struct State {
    var pieces: [[UInt8]] = []
    var queued = 0
    /// Bytes of this stream the loop holds unsent, as it last reported.
    var held = 0
    var end: End?
    /// The client went (or the loop stopped): every write from now on throws.
    var cancelled = false
    /// A wake-up is on its way to the loop; more pieces need no other.
    var wakePosted = false
    var waiter: CheckedContinuation<Void, any Error>?
  }

  let bound: Int
  private let state = Mutex(State())
  private let loop: EventLoop
  private let fd: Int32
  private let generation: UInt32
  private let shared: ServerShared

  init(loop: EventLoop, fd: Int32, generation: UInt32, shared: ServerShared) {
    self.loop = loop
    self.fd = fd
    self.generation = generation
    self.shared = shared
    self.bound = shared.configuration.streamBufferBytes
  }

  /// Runs the producer to its end and tells the loop how it ended.
  func run(_ produce: BodyStream.Producer) async {
    do {
      try await produce(BodyWriter { try await self.write($0) })
      close(.finished)
    } catch {
      close(.failed(String(describing: error)))
    }
  }

  /// The producer's side of `BodyWriter.write`.
  func write(_ bytes: [UInt8]) async throws {
    try Task.checkCancellation()
    let wake = try state.withLock { state -> Bool in
      if state.cancelled { throw CancellationError() }
      state.pieces.append(bytes)
      state.queued += bytes.count
      shared.noteStreamBuffered(state.queued + state.held)
      if state.wakePosted { return false }
      state.wakePosted = true
      return true
    }
    if wake { notifyLoop() }
    try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation { (waiter: CheckedContinuation<Void, any Error>) in
        let now: Result<Void, any Error>? = state.withLock { state in
          if state.cancelled { return .failure(CancellationError()) }
          if state.queued + state.held <= bound { return .success(()) }
          state.waiter = waiter
          return nil
        }
        if let now { waiter.resume(with: now) }
      }
    } onCancel: {
      cancel()
    }
  }

  /// The loop's side: every queued piece, and the end if the producer has finished (only
  /// after its last piece, since all are taken at once).
  func take() -> (pieces: [[UInt8]], end: End?) {
    state.withLock { state in
      state.wakePosted = false
      let pieces = state.pieces
      state.pieces = []
      // Moved, not gone: counted as held until the loop reports what it really holds, so a
      // write in between never sees room that is not there.
      state.held += state.queued
      state.queued = 0
      return (pieces, state.end)
    }
  }

  /// The loop holds `held` bytes of this stream unsent: a waiting producer goes on once the
  /// total is back under the bound.
  func report(held: Int) {
    let waiter = state.withLock { state -> CheckedContinuation<Void, any Error>? in
      state.held = held
      guard state.queued + held <= bound else { return nil }
      return state.waiter.take()
    }
    waiter?.resume()
  }

  /// The client is gone: the producer's next (or current) write throws.
  func cancel() {
    let waiter = state.withLock { state -> CheckedContinuation<Void, any Error>? in
      state.cancelled = true
      return state.waiter.take()
    }
    waiter?.resume(throwing: CancellationError())
  }

  private func close(_ end: End) {
    let wake = state.withLock { state -> Bool in
      state.end = end
      if state.wakePosted || state.cancelled { return false }
      state.wakePosted = true
      return true
    }
    if wake { notifyLoop() }
  }

  private func notifyLoop() {
    if !loop.post(.stream(fd: fd, generation: generation)) { cancel() }
  }
}
