import StorekeeperCore
import StorekeeperLogging

/// One tick of the charts' rollup (docs/CHARTS.md): the instance that takes the lease brings
/// the rollups up to date with what changed since the last pass (the first pass rebuilds
/// them whole), the others skip. A pass is one transaction, never seen half done; its
/// `as_of` and lag are in every rolled-up chart and in /metrics.
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
      let pass = try await rollup.refresh()
      let state = try await rollup.state()
      var fields: [String: LogValue] = [
        "generation": .int(Int(pass.generation)), "rows": .int(Int(pass.rows)),
        "units": .int(Int(pass.units ?? -1)), "build_ms": .int(Int(state.buildMs ?? 0)),
        "as_of": .string(state.asOf ?? ""), "counts_zone": .string(state.countsZone),
      ]
      // Said, since it costs a whole rebuild: instances that disagree on CHARTS_TIME_ZONE
      // would rebuild at every pass.
      if let before = pass.movedFrom { fields["counted_before_in"] = .string(before) }
      logger.info(pass.units == nil ? "chart rollup rebuilt" : "chart rollup refreshed", fields)
    } catch {
      logger.warning("chart rollup failed", ["error": .string("\(error)")])
    }
  }
}
