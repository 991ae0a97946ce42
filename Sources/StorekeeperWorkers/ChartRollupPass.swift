import StorekeeperCore
import StorekeeperLogging

/// One tick of the charts' rollup (docs/CHARTS.md): the instance that takes the lease rebuilds
/// the hourly rollup, the others skip. Charts read the previous generation until the new one
/// commits, so a pass is never seen half done; its `as_of` and lag are in every rolled-up
/// chart and in /metrics.
package struct ChartRollupPass: Sendable {
  let rollup: ChartRollup
  let intervalMs: Int64
  let logger: Logger

  package init(rollup: ChartRollup, intervalMs: Int64, logger: Logger) {
    self.rollup = rollup
    self.intervalMs = intervalMs
    self.logger = logger
  }

  package func runOnce() async {
    do {
      guard try await rollup.claim(intervalMs: intervalMs) else { return }
      let built = try await rollup.rebuild()
      let state = try await rollup.state()
      logger.info(
        "chart rollup rebuilt",
        [
          "generation": .int(Int(built.generation)), "rows": .int(Int(built.rows)),
          "build_ms": .int(Int(state.buildMs ?? 0)), "as_of": .string(state.asOf ?? ""),
        ])
    } catch {
      logger.warning("chart rollup failed", ["error": .string("\(error)")])
    }
  }
}
