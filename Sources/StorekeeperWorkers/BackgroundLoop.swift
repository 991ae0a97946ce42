import StorekeeperCore
import StorekeeperLogging

/// Runs `body` every `intervalMs`, or at once when its signal is woken; wake-ups while it runs
/// coalesce into one more run. Used by the sweeper and the retry and notification workers.
///
/// Cancelling `run()` stops the ticking and lets a run in progress finish: the body runs in a
/// task of its own, so the cancellation does not cancel its statements halfway. The body sees
/// it through `LoopStop.requested`, and a wake-up buffered before it starts no further run.
package struct BackgroundLoop: Service {
  package let name: String
  private let intervalMs: Int64
  private let signal: WorkSignal
  private let logger: Logger
  private let body: @Sendable () async -> Void

  package init(
    name: String, intervalMs: Int64, signal: WorkSignal = WorkSignal(), logger: Logger,
    body: @escaping @Sendable () async -> Void
  ) {
    self.name = name
    self.intervalMs = intervalMs
    self.signal = signal
    self.logger = logger
    self.body = body
  }

  package func run() async {
    let (signal, interval, body) = (signal, intervalMs, body)
    let stop = LoopStop()
    let ticker = Task {
      signal.wake()
      while !Task.isCancelled {
        try? await Task.sleep(for: .milliseconds(interval))
        signal.wake()
      }
    }
    logger.debug(
      "background loop started", ["loop": .string(name), "interval_ms": .int(Int(interval))])
    await withTaskCancellationHandler {
      for await _ in signal.wakes {
        // A wake buffered before the cancellation is still handed over: not a run to start.
        if stop.isSet { break }
        await Task { await LoopStop.$current.withValue(stop) { await body() } }.value
      }
    } onCancel: {
      stop.set()
      ticker.cancel()
      signal.finish()
    }
    ticker.cancel()
  }
}
