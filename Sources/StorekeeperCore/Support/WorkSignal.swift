/// A wake-up for one background worker, made before both its sender and the worker: the
/// domain says work is waiting (a notification stored, a webhook queued), and the worker it
/// is handed to runs at once instead of at its next tick. Wake-ups while one is pending
/// coalesce into one.
package final class WorkSignal: Sendable {
  package let wakes: AsyncStream<Void>
  private let continuation: AsyncStream<Void>.Continuation

  package init() {
    (wakes, continuation) = AsyncStream.makeStream(
      of: Void.self, bufferingPolicy: .bufferingNewest(1))
  }

  package func wake() { continuation.yield() }

  /// No more wake-ups: the worker reading `wakes` is stopping.
  package func finish() { continuation.finish() }
}
