import HTTP
import StorekeeperCore

/// `GET /admin/v1/reconcile/repairs`: every repair reconciliation made, newest first, in
/// keyset pages, optionally for one user or one subscription.
package struct AdminReconcileRoutes: Sendable {
  typealias Filter = ReconcileRepairLog.Filter

  let auth: AdminAuthenticator
  let repairs: ReconcileRepairLog

  package init(auth: AdminAuthenticator, repairs: ReconcileRepairLog) {
    self.auth = auth
    self.repairs = repairs
  }

  package func register(_ router: inout APIRouter) {
    router.add(.get, "/admin/v1/reconcile/repairs") { request, context in
      _ = try auth.authenticate(request, context)
      let filter = try Self.filter(request.query)
      let page = try await repairs.list(filter)
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
