import HTTP
import Postgres

/// Apple's notification endpoint and the admin views of what arrived.
struct NotificationRoutes: Sendable {
  let service: NotificationService
  let auth: AdminAuthenticator
  let wake: @Sendable () -> Void
  /// Where the admin listings read: the read replica when there is one.
  let listings: PostgresPool

  func register(_ router: inout APIRouter) {
    router.add(.post, "/v1/apple/notifications") { request, _ in
      var fields = try RequestFields(request: request)
      guard let payload = fields.string("signedPayload", required: true, maxLength: 256 * 1024)
      else {
        try fields.validate()
        throw HTTPError(400, code: "validation_failed")
      }
      let stored = try await service.receive(signedPayload: payload)
      // Processing happens after the answer; a crash in between loses nothing (it is stored).
      wake()
      return try JSONCoding.response(["status": stored ? "received" : "duplicate"])
    }
  }

  /// The admin views of what arrived: on the admin surface, which may be a listener of its own.
  func registerAdmin(_ router: inout APIRouter) {
    router.add(.get, "/admin/v1/notifications") { request, context in
      _ = try auth.authenticate(request, context)
      return try await list(request.query, onlyType: nil)
    }
    router.add(.get, "/admin/v1/consumption-requests") { request, context in
      _ = try auth.authenticate(request, context)
      return try await list(request.query, onlyType: "CONSUMPTION_REQUEST")
    }
  }

  private func list(_ query: [String: String], onlyType: String?) async throws -> Response {
    var problems: [FieldError] = []
    let known: Set<String> = ["notification_type", "state", "transaction_id", "limit", "cursor"]
    var sql: PostgresQuery =
      "SELECT \(unescaped: NotificationView.columns) FROM apple_notifications WHERE true"
    if let type = onlyType ?? query["notification_type"] {
      if type.unicodeScalars.count <= 64, !type.unicodeScalars.contains("\u{0}") {
        sql.append(" AND notification_type = \(type)")
      } else {
        problems.append(
          FieldError(
            field: "notification_type", message: "must be at most 64 characters, without NUL"))
      }
    }
    if let text = query["state"] {
      if let state = NotificationState(rawValue: text) {
        sql.append(" AND state = \(state)")
      } else {
        let names = NotificationState.allCases.map(\.rawValue).joined(separator: ", ")
        problems.append(FieldError(field: "state", message: "must be one of \(names)"))
      }
    }
    if let id = query["transaction_id"] {
      if id.unicodeScalars.count <= 64, !id.unicodeScalars.contains("\u{0}") {
        sql.append(" AND transaction_id = \(id)")
      } else {
        problems.append(
          FieldError(field: "transaction_id", message: "must be at most 64 characters, without NUL")
        )
      }
    }
    let page = PageRequest(numeric: query, known: known, problems: &problems)
    if let seq = page.before { sql.append(" AND seq < \(seq)") }
    try PageRequest.check(problems)
    let limit = page.limit
    sql.append(" ORDER BY seq DESC LIMIT \(limit + 1)")
    let rows = try await listings.query(sql)
    let items = try rows.prefix(limit).map(NotificationView.init(row:))
    var next: String?
    if rows.count > limit, let last = rows.prefix(limit).last {
      let seq: Int64 = try last.decode("seq")
      next = String(seq)
    }
    return try JSONCoding.response(ListPage("notifications", items, next: next))
  }
}
