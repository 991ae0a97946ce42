import Foundation
import Postgres
import StorekeeperCore

extension Commands {
  /// `storekeeper charts-backfill [--changes]`: rebuilds the charts' rollups from the
  /// transactions now, whatever the background pass's lease (it waits for a pass in progress,
  /// then makes its own), and prints what it built. For a fresh install with history, or after
  /// a restore. `--changes` runs one incremental pass instead, as the background pass does.
  public static func chartsBackfill(_ arguments: [String] = []) async -> Int32 {
    guard arguments.allSatisfy({ $0 == "--changes" }) else {
      FileHandle.standardError.write(Data("usage: storekeeper charts-backfill [--changes]\n".utf8))
      return 2
    }
    guard let url = commandDatabaseURL() else { return 2 }
    let zone: String
    do {
      zone =
        try ConfigReader(env: ProcessInfo.processInfo.environment).timeZone(
          "CHARTS_TIME_ZONE") ?? "UTC"
    } catch {
      FileHandle.standardError.write(Data("configuration error: \(error)\n".utf8))
      return 2
    }
    let log = logger(.notice)
    let pool = commandPool(url: url, logger: log)
    do {
      // A zone PostgreSQL does not know would be recorded as the counts' and fail every pass.
      guard try await ChartRepository(database: pool).knowsTimeZone(zone) else {
        FileHandle.standardError.write(
          Data(
            "configuration error: CHARTS_TIME_ZONE is not a time zone PostgreSQL knows (pg_timezone_names), got \"\(zone)\"\n"
              .utf8))
        await pool.shutdown()
        return 2
      }
      // A rebuild on a database restored without its cluster's counter would record a horizon
      // below the rows written next, which every pass would then re-read.
      try await TransactionIdCheck.verify(pool)
      // In the servers' zone: a pass of theirs finding the counts in another would rebuild.
      let rollup = ChartRollup(database: pool, countsZone: zone, logger: log)
      let built = try await arguments.isEmpty ? rollup.rebuild() : rollup.refresh()
      let state = try await rollup.state()
      let units = built.units.map { ", \($0) changed units" } ?? ""
      let moved = built.movedFrom.map { " (were in \($0))" } ?? ""
      print(
        "charts rollup: generation \(built.generation), \(built.rows) rows\(units), exact up to "
          + "\(state.asOf ?? "?"), payers and cohorts counted in \(state.countsZone)\(moved), built in "
          + "\(state.buildMs ?? 0) ms")
      await pool.shutdown()
      return 0
    } catch let error as TransactionIdsAhead {
      FileHandle.standardError.write(Data("refused: \(error)\n".utf8))
      await pool.shutdown()
      return 2
    } catch {
      FileHandle.standardError.write(Data("charts-backfill failed: \(failure(error))\n".utf8))
      await pool.shutdown()
      return 1
    }
  }
}
