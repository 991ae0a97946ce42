import HTTP
import StorekeeperCore

/// `GET /admin/v1/audit`: who changed what, newest first, in keyset pages.
package struct AdminAuditRoutes: Sendable {
  let auth: AdminAuthenticator
  let audit: AuditLog

  package init(auth: AdminAuthenticator, audit: AuditLog) {
    self.auth = auth
    self.audit = audit
  }

  package func register(_ router: inout APIRouter) {
    router.add(.get, "/admin/v1/audit") { request, context in
      _ = try auth.authenticate(request, context)
      let page = try await audit.list(try Self.filter(request.query))
      return try JSONCoding.response(ListPage("entries", page.entries, next: page.next))
    }
  }

  static func filter(_ query: [String: String]) throws -> AuditLog.Filter {
    var problems: [FieldError] = []
    var filter = AuditLog.Filter()
    filter.admin = PageRequest.text(query, "admin", problems: &problems)
    // As long as what is audited: a transfer of a Google purchase named by its token.
    filter.targetId = PageRequest.text(
      query, "target_id", maxLength: Proof.maxPurchaseTokenCharacters, problems: &problems)
    if let name = query["action"] {
      if let action = AdminAction(rawValue: name) {
        filter.action = action
      } else {
        let names = AdminAction.allCases.map(\.rawValue).joined(separator: ", ")
        problems.append(FieldError(field: "action", message: "must be one of \(names)"))
      }
    }
    let page = PageRequest(
      numeric: query, known: ["admin", "action", "target_id"], problems: &problems)
    filter.limit = page.limit
    filter.before = page.before
    try PageRequest.check(problems)
    return filter
  }
}
