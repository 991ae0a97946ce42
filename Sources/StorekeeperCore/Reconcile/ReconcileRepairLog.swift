import Postgres

/// Every repair reconciliation made, newest first, in keyset pages, optionally for one user or
/// one subscription.
package struct ReconcileRepairLog: Sendable {
  package struct Filter: Sendable {
    package var userId: String?
    package var originalTransactionId: String?
    package var limit = 50
    package var before: Int64?

    package init(
      userId: String? = nil, originalTransactionId: String? = nil, limit: Int = 50,
      before: Int64? = nil
    ) {
      self.userId = userId
      self.originalTransactionId = originalTransactionId
      self.limit = limit
      self.before = before
    }
  }

  let database: PostgresPool

  package init(database: PostgresPool) {
    self.database = database
  }

  /// Up to `filter.limit` repairs, and the cursor of the next page.
  package func list(_ filter: Filter) async throws -> (items: [ReconcileRepairEntry], next: String?)
  {
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
