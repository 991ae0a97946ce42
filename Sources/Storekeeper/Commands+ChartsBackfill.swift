import Foundation
import Postgres
import StorekeeperCore

extension Commands {
  /// `storekeeper charts-backfill`: rebuilds the charts' hourly rollup from the transactions
  /// now, whatever the background pass's lease (a rebuild waits for one in progress, then makes
  /// its own), and prints what it built. For a fresh install with history, or after a restore.
  public static func chartsBackfill() async -> Int32 {
    guard let url = ProcessInfo.processInfo.environment["DATABASE_URL"], !url.isEmpty else {
      FileHandle.standardError.write(
        Data("configuration error: DATABASE_URL is required but not set\n".utf8))
      return 2
    }
    let pool = PostgresPool(
      configuration: PostgresConfiguration(url: url), logger: logger(.notice))
    do {
      let rollup = ChartRollup(database: pool)
      let built = try await rollup.rebuild()
      let state = try await rollup.state()
      print(
        "charts rollup: generation \(built.generation), \(built.rows) rows, exact up to "
          + "\(state.asOf ?? "?"), built in \(state.buildMs ?? 0) ms")
      await pool.shutdown()
      return 0
    } catch {
      FileHandle.standardError.write(Data("charts-backfill failed: \(error)\n".utf8))
      await pool.shutdown()
      return 1
    }
  }
}
