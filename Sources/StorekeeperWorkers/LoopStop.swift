import Synchronization

/// Whether the background loop running the current body has been told to stop. A loop's body
/// runs in a task of its own, so that shutdown never cancels a statement halfway; its
/// cancellation does not reach the body. A body that goes on in batches (claiming more
/// work each time) asks `LoopStop.requested` between them, so that it stops claiming work it
/// would leave leased when the process exits.
package final class LoopStop: Sendable {
  private let stopped = Atomic<Bool>(false)

  /// The stop flag of the loop running this task, if one is.
  @TaskLocal static var current: LoopStop?

  /// True once the loop running this body has been cancelled.
  package static var requested: Bool { current?.isSet ?? false }

  var isSet: Bool { stopped.load(ordering: .acquiring) }

  func set() { stopped.store(true, ordering: .releasing) }
}
