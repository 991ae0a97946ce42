import StorekeeperCore
import StorekeeperLogging

/// Writes the exposures requests recorded (`ExposureRecorder`) every second, or at once when a
/// batch fills; on shutdown, once more after the loop stops, so exposures served just before a
/// SIGTERM are kept.
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
    await Self.flush(recorder, logger)
  }

  static func flush(_ recorder: ExposureRecorder, _ logger: Logger) async {
    do { try await recorder.flush() } catch {
      let counts = recorder.counts
      logger.warning(
        "exposures not written; will retry",
        [
          "error": .string("\(error)"), "pending": .int(counts.pending),
          "dropped": .int(counts.dropped),
        ])
    }
  }
}
