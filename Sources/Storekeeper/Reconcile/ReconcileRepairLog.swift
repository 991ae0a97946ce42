import Postgres

/// Every repair reconciliation made, newest first, in keyset pages, optionally for one user or
/// one subscription.
struct ReconcileRepairLog: Sendable {
  struct Filter: Sendable {
    var userId: String?
    var originalTransactionId: String?
    var limit = 50
    var before: Int64?
  }

  let database: PostgresPool

  /// Up to `filter.limit` repairs, and the cursor of the next page.
  func list(_ filter: Filter) async throws -> (items: [ReconcileRepairEntry], next: String?) {
    var query: PostgresQuery = """
      SELECT \(unescaped: ReconcileRepairEntry.columns)
      FROM reconcile_repairs r JOIN reconcile_runs u ON u.id = r.run_id WHERE true
      """
    if let user = filter.userId { query.append(" AND r.user_id = \(user)") }
    if let original = filter.originalTransactionId {
      query.append(" AND r.original_transaction_id = \(original)")
    }
    if let before = filter.before { query.append(" AND r.id < \(before)") }
    query.append(" ORDER BY r.id DESC LIMIT \(filter.limit + 1)")
    let rows = try await database.query(query).map(ReconcileRepairEntry.init(row:))
    return KeysetPage.split(rows, limit: filter.limit) { String($0.id) }
  }
}
