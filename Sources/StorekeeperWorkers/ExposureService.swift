import StorekeeperCore
import StorekeeperLogging

/// Writes the exposures requests recorded (`ExposureRecorder`) every second, or at once when a
/// batch fills; on shutdown, once more after the loop stops, so exposures served just before a
/// SIGTERM are kept.
///
/// That last flush runs in a task of its own, as the loop's body does: shutdown cancels the
/// service's task, and a statement sent from a cancelled task is cancelled on the server at
/// once (57014), so a flush run there wrote nothing and the waiting exposures were lost with the
/// process. The wait for it is bounded by the workers' grace period (`ServiceGroup.shutdown`).
package struct ExposureService: Service {
  let loop: BackgroundLoop
  let recorder: ExposureRecorder
  let logger: Logger

  package init(recorder: ExposureRecorder, signal: WorkSignal, logger: Logger) {
    self.recorder = recorder
    self.logger = logger
    loop = BackgroundLoop(
      name: "exposures", intervalMs: 1000, signal: signal, logger: logger
    ) { await Self.flush(recorder, logger) }
  }

  package var name: String { loop.name }

  package func run() async {
    await loop.run()
    let (recorder, logger) = (recorder, logger)
    await Task { await Self.flush(recorder, logger, last: true) }.value
  }

  static func flush(_ recorder: ExposureRecorder, _ logger: Logger, last: Bool = false) async {
    do { try await recorder.flush() } catch {
      let counts = recorder.counts
      logger.warning(
        last
          ? "exposures not written before exit; each user is recorded at their next exposure"
          : "exposures not written; will retry",
        [
          "error": .string("\(error)"), "pending": .int(counts.pending),
          "dropped": .int(counts.dropped),
        ])
    }
  }
}
