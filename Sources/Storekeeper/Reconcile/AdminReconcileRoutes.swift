import HTTP
import Postgres

/// `GET /admin/v1/reconcile/repairs`: every repair reconciliation made, newest first, in
/// keyset pages, optionally for one user or one subscription.
struct AdminReconcileRoutes: Sendable {
  struct Filter {
    var userId: String?
    var originalTransactionId: String?
    var limit = 50
    var before: Int64?
  }

  let auth: AdminAuthenticator
  let database: PostgresPool

  func register(_ router: inout APIRouter) {
    router.add(.get, "/admin/v1/reconcile/repairs") { request, context in
      _ = try auth.authenticate(request, context)
      let filter = try Self.filter(request.query)
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
      let page = KeysetPage.split(rows, limit: filter.limit) { String($0.id) }
      return try JSONCoding.response(ListPage("repairs", page.items, next: page.next))
    }
  }

  static func filter(_ query: [String: String]) throws -> Filter {
    var problems: [FieldError] = []
    var filter = Filter()
    filter.userId = PageRequest.text(query, "user_id", problems: &problems)
    filter.originalTransactionId = PageRequest.text(
      query, "original_transaction_id", problems: &problems)
    let page = PageRequest(
      numeric: query, known: ["user_id", "original_transaction_id"], problems: &problems)
    filter.limit = page.limit
    filter.before = page.before
    try PageRequest.check(problems)
    return filter
  }
}
