/// A wake-up for one background worker, made before both its sender and the worker: the
/// domain says work is waiting (a notification stored, a webhook queued), and the worker it
/// is handed to runs at once instead of at its next tick. Wake-ups while one is pending
/// coalesce into one.
final class WorkSignal: Sendable {
  let wakes: AsyncStream<Void>
  private let continuation: AsyncStream<Void>.Continuation

  init() {
    (wakes, continuation) = AsyncStream.makeStream(
      of: Void.self, bufferingPolicy: .bufferingNewest(1))
  }

  func wake() { continuation.yield() }

  /// No more wake-ups: the worker reading `wakes` is stopping.
  func finish() { continuation.finish() }
}
