import HTTP
import StorekeeperCore

/// `GET /admin/v1/events`: the event feed for backends that pull (read scope).
package struct EventRoutes: Sendable {
  let auth: AdminAuthenticator
  let feed: EventFeed

  package init(auth: AdminAuthenticator, feed: EventFeed) {
    self.auth = auth
    self.feed = feed
  }

  static let maxLimit = 200

  package func register(_ router: inout APIRouter) {
    router.add(.get, "/admin/v1/events") { request, context in
      _ = try auth.authenticate(request, context)
      let page = try await feed.read(try Self.filter(request.query))
      struct Body: Encodable {
        var events: [Event]
        var nextCursor: String?
        var hasMore: Bool
        enum CodingKeys: String, CodingKey {
          case events
          case nextCursor = "next_cursor"
          case hasMore = "has_more"
        }
      }
      return try JSONCoding.response(
        Body(events: page.events, nextCursor: page.next?.text, hasMore: page.hasMore))
    }
  }

  static func filter(_ query: [String: String]) throws -> EventFeed.Filter {
    var problems: [FieldError] = []
    var filter = EventFeed.Filter()
    for name in query.keys.sorted() where !["user_id", "type", "after", "limit"].contains(name) {
      problems.append(FieldError(field: name, message: "is not a known filter"))
    }
    if let user = query["user_id"] {
      if UserId.isValid(user) {
        filter.userId = user
      } else {
        problems.append(FieldError(field: "user_id", message: "must be 1-128 printable characters"))
      }
    }
    if let text = query["type"] {
      if let type = EventType(rawValue: text) {
        filter.type = type
      } else {
        problems.append(
          FieldError(
            field: "type",
            message: "must be one of \(EventType.allCases.map(\.rawValue).joined(separator: ", "))")
        )
      }
    }
    if let text = query["after"] {
      if let cursor = EventFeedCursor(text: text) {
        filter.after = cursor
      } else {
        problems.append(FieldError(field: "after", message: "must be a next_cursor of this feed"))
      }
    }
    if let text = query["limit"] {
      if text.utf8.count <= 3, let value = Int(text), (1...maxLimit).contains(value) {
        filter.limit = value
      } else {
        problems.append(FieldError(field: "limit", message: "must be between 1 and \(maxLimit)"))
      }
    }
    if let cursor = filter.after, problems.isEmpty, !cursor.reads(userId: filter.userId) {
      problems.append(
        FieldError(
          field: "after",
          message: filter.userId == nil
            ? "is a cursor of one user's feed: read on with that user_id"
            : "is a cursor of another user's feed"))
    }
    guard problems.isEmpty else {
      throw HTTPError(
        400, code: "invalid_query", detail: "one or more query parameters are invalid",
        fields: problems)
    }
    return filter
  }
}
