import Testing

@testable import Postgres

/// The chart rollups hold what the definitions of the release that built them answered, and a
/// pass recomputes only the units whose rows changed: a definition that changes what rows
/// already written are charted as changes no row, so the rollups go on answering the old way
/// (`source=auto` against `source=transactions`) until a whole rebuild. So a release that
/// changes a chart definition comes with a versioned migration that resets
/// `chart_rollup_state` (`horizon` or `counts_horizon` set to NULL: the next pass rebuilds).
@Suite struct ChartRollupResetTests {
  /// The repeatable files the rollups are built from: `ChartRollup` reads `chart_transactions`
  /// and `chart_subscription_periods` and keys its units with `storekeeper_google_subscription`,
  /// all of charts.sql. Not charts_metrics.sql: the charts it serves (billing trouble,
  /// consumption requests, converted money) always read the transactions.
  static let chartDefinitions = ["charts.sql"]

  /// Releases whose change to a chart definition came with no reset: why the rollups stayed
  /// right, or the migration that reset them later.
  static let rollupsKept: [Int: (reason: String, resetBy: Int?)] = [
    131: (
      """
      billed_period reads billed_expires_date, a column 0131 adds NULL, falling back to \
      expires_date as before: every row written before is charted as it was
      """, nil
    ),
    133: ("only adds export_key, a column the rollups do not read", nil),
    141: (
      """
      a Google chargeback of an upgraded purchase's latest order became a refund, and the \
      release shipped without a reset: 0143 resets the rollups
      """, 143
    ),
  ]

  /// Whether `sql` sets `chart_rollup_state.horizon` or `counts_horizon` to NULL.
  static func resetsRollups(_ sql: String) -> Bool {
    let code = sql.split(separator: "\n", omittingEmptySubsequences: false)
      .map { line in line.range(of: "--").map { line[..<$0.lowerBound] } ?? line }
      .joined(separator: " ").lowercased()
    return code.split(separator: ";").contains { statement in
      let words = statement.split(whereSeparator: \.isWhitespace).joined(separator: " ")
      return words.hasPrefix("update chart_rollup_state set ")
        && words.replacingOccurrences(of: " = ", with: "=").contains("horizon=null")
    }
  }

  @Test func aReleaseChangingAChartDefinitionResetsTheRollups() throws {
    let recorded = try ReleaseRecordTests.recorded()
    let files = try MigrationFile.load(directory: ReleaseRecordTests.migrations)
    let resets = Set(files.filter { Self.resetsRollups($0.sql) }.map(\.version))
    // The resets made before: a reading that missed them would pass every release.
    #expect([123, 130, 137, 143].allSatisfy(resets.contains), "\(resets.sorted())")

    let releases = recorded.keys.sorted()
    var unreset: [Int] = []
    for (earlier, later) in zip(releases, releases.dropFirst()) {
      let changed = Self.chartDefinitions.filter { recorded[earlier]?[$0] != recorded[later]?[$0] }
      guard !changed.isEmpty, !resets.contains(where: { $0 > earlier && $0 <= later }) else {
        continue
      }
      unreset.append(later)
      #expect(
        Self.rollupsKept[later] != nil,
        """
        release \(later) changed \(changed) since release \(earlier), and no migration after \
        \(earlier) up to \(later) resets chart_rollup_state: the rollups keep what the old \
        definition answered. Add `UPDATE chart_rollup_state SET horizon = NULL, counts_horizon \
        = NULL;` to this release's migration (with `SET LOCAL lock_timeout = '5s';`).
        """)
    }
    #expect(
      unreset.sorted() == Self.rollupsKept.keys.sorted(),
      "an exception for a release that needs none: \(Self.rollupsKept.keys.sorted())")
    for (release, kept) in Self.rollupsKept {
      if let reset = kept.resetBy {
        #expect(resets.contains(reset), "release \(release) is said to be reset by \(reset)")
      }
    }
  }

  @Test func aResetIsReadFromTheStatementNotAComment() {
    #expect(
      Self.resetsRollups(
        "SET LOCAL lock_timeout = '5s';\nUPDATE chart_rollup_state SET horizon = NULL;"))
    #expect(Self.resetsRollups("UPDATE chart_rollup_state\n  SET counts_horizon=NULL"))
    #expect(!Self.resetsRollups("-- UPDATE chart_rollup_state SET horizon = NULL;\nSELECT 1;"))
    #expect(!Self.resetsRollups("UPDATE chart_rollup_state SET lease_until = now();"))
  }
}
