import HTTP

/// `GET /admin/v1/audit`: who changed what, newest first, in keyset pages.
struct AdminAuditRoutes: Sendable {
  let auth: AdminAuthenticator
  let audit: AuditLog

  func register(_ router: inout APIRouter) {
    router.add(.get, "/admin/v1/audit") { request, context in
      _ = try auth.authenticate(request, context)
      let page = try await audit.list(try Self.filter(request.query))
      struct Page: Encodable {
        var entries: [AuditEntry]
        var nextCursor: String?
        enum CodingKeys: String, CodingKey {
          case entries
          case nextCursor = "next_cursor"
        }
      }
      return try JSONCoding.response(Page(entries: page.entries, nextCursor: page.next))
    }
  }

  static func filter(_ query: [String: String]) throws -> AuditLog.Filter {
    var problems: [FieldError] = []
    var filter = AuditLog.Filter()
    // Text PostgreSQL can hold and an index can compare: 1-128 characters, no NUL.
    func text(_ name: String) -> String? {
      guard let value = query[name] else { return nil }
      guard (1...128).contains(value.unicodeScalars.count), !value.unicodeScalars.contains("\u{0}")
      else {
        problems.append(FieldError(field: name, message: "must be 1-128 characters, without NUL"))
        return nil
      }
      return value
    }
    filter.admin = text("admin")
    filter.targetId = text("target_id")
    if let name = query["action"] {
      if let action = AdminAction(rawValue: name) {
        filter.action = action
      } else {
        let names = AdminAction.allCases.map(\.rawValue).joined(separator: ", ")
        problems.append(FieldError(field: "action", message: "must be one of \(names)"))
      }
    }
    let page = PageRequest(
      query, known: ["admin", "action", "target_id"], problems: &problems,
      cursorRule: "must be 1-18 digits",
      isKey: { !$0.isEmpty && $0.utf8.count <= 18 && $0.utf8.allSatisfy { $0 >= 48 && $0 <= 57 } })
    filter.limit = page.limit
    filter.before = page.after.flatMap(Int64.init)
    try PageRequest.check(problems)
    return filter
  }
}
