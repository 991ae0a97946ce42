import HTTP
import Postgres
import StorekeeperCore

/// Apple's notification endpoint and the admin views of what arrived.
package struct NotificationRoutes: Sendable {
  let service: NotificationService
  let auth: AdminAuthenticator
  let wake: @Sendable () -> Void
  /// The admin listings, read from the read replica when there is one.
  let listings: NotificationListing

  package init(
    service: NotificationService, auth: AdminAuthenticator, wake: @escaping @Sendable () -> Void,
    listings: NotificationListing
  ) {
    self.service = service
    self.auth = auth
    self.wake = wake
    self.listings = listings
  }

  package func register(_ router: inout APIRouter) {
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
  package func registerAdmin(_ router: inout APIRouter) {
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
    var filter = NotificationListing.Filter()
    if let type = onlyType ?? query["notification_type"] {
      if type.unicodeScalars.count <= 64, !PostgresText.containsNUL(type) {
        filter.notificationType = type
      } else {
        problems.append(
          FieldError(
            field: "notification_type", message: "must be at most 64 characters, without NUL"))
      }
    }
    if let text = query["state"] {
      if let state = NotificationState(rawValue: text) {
        filter.state = state
      } else {
        let names = NotificationState.allCases.map(\.rawValue).joined(separator: ", ")
        problems.append(FieldError(field: "state", message: "must be one of \(names)"))
      }
    }
    if let id = query["transaction_id"] {
      if id.unicodeScalars.count <= 64, !PostgresText.containsNUL(id) {
        filter.transactionId = id
      } else {
        problems.append(
          FieldError(field: "transaction_id", message: "must be at most 64 characters, without NUL")
        )
      }
    }
    let page = PageRequest(numeric: query, known: known, problems: &problems)
    filter.before = page.before
    filter.limit = page.limit
    try PageRequest.check(problems)
    let (items, next) = try await listings.list(filter)
    return try JSONCoding.response(ListPage("notifications", items, next: next))
  }
}
