import Postgres

/// `/metrics` lines about reconciliation, read from PostgreSQL so that repairs made by the
/// `storekeeper reconcile` command and by every instance's pass are counted alike.
package enum ReconcileMetrics {
  static let kinds = ["renewed", "revoked", "refund_reversed", "expiry_changed", "state_changed"]

  package static func lines(_ database: PostgresPool) async throws -> [String] {
    var repairs: [String: Int64] = [:]
    for row in try await database.query(
      "SELECT kind, count(*)::bigint AS n FROM reconcile_repairs GROUP BY kind")
    {
      repairs[try row.decode("kind")] = try row.decode("n")
    }
    var lines = [
      "# HELP storekeeper_reconcile_repairs_total Subscriptions repaired to match Apple, by kind.",
      "# TYPE storekeeper_reconcile_repairs_total counter",
    ]
    lines += kinds.map { "storekeeper_reconcile_repairs_total{kind=\"\($0)\"} \(repairs[$0] ?? 0)" }
    let last = try await database.query(
      """
      SELECT coalesce(extract(epoch FROM finished_at), 0)::bigint AS finished,
             (last_error IS NOT NULL)::int::bigint AS failing, errors::bigint AS errors
      FROM reconcile_runs WHERE finished_at IS NOT NULL ORDER BY id DESC LIMIT 1
      """
    ).first
    lines += [
      "# HELP storekeeper_reconcile_last_run_seconds When the last reconcile pass ended (0: never).",
      "# TYPE storekeeper_reconcile_last_run_seconds gauge",
      "storekeeper_reconcile_last_run_seconds \(try last?.decode("finished", as: Int64.self) ?? 0)",
      "# HELP storekeeper_reconcile_failing 1 when the last reconcile pass stopped early "
        + "(Apple unreachable, rate limiting or refusing the key).",
      "# TYPE storekeeper_reconcile_failing gauge",
      "storekeeper_reconcile_failing \(try last?.decode("failing", as: Int64.self) ?? 0)",
      "# HELP storekeeper_reconcile_last_run_errors Subscriptions the last pass could not check.",
      "# TYPE storekeeper_reconcile_last_run_errors gauge",
      "storekeeper_reconcile_last_run_errors \(try last?.decode("errors", as: Int64.self) ?? 0)",
    ]
    return lines
  }
}
