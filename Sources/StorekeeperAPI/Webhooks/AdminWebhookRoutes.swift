import Foundation
import HTTP
import StorekeeperCore

/// `/admin/v1/webhook-endpoints…` and `/admin/v1/webhook-deliveries`: endpoints with their
/// secrets (shown once), replays, test events, and every delivery with its attempts. Reads need
/// a read token, changes a write token (`AdminAuthenticator`); every change is audited.
package struct AdminWebhookRoutes: Sendable {
  let auth: AdminAuthenticator
  let store: WebhookStore
  let log: WebhookDeliveryLog
  let entitlements: EntitlementRepository
  let allowInsecureURLs: Bool
  let wake: @Sendable () -> Void

  package init(
    auth: AdminAuthenticator, store: WebhookStore, log: WebhookDeliveryLog,
    entitlements: EntitlementRepository, allowInsecureURLs: Bool,
    wake: @escaping @Sendable () -> Void
  ) {
    self.auth = auth
    self.store = store
    self.log = log
    self.entitlements = entitlements
    self.allowInsecureURLs = allowInsecureURLs
    self.wake = wake
  }

  static let maxEventTypes = 50

  package func register(_ router: inout APIRouter) {
    router.add(.post, "/admin/v1/webhook-endpoints") { request, context in
      let actor = try auth.authenticate(request, context)
      var fields = try RequestFields(request: request)
      fields.rejectUnknown(allowed: ["url", "event_types", "enabled"])
      let url = readURL(&fields, required: true)
      let types = Self.eventTypes(&fields) ?? [WebhookEndpoint.allTypes]
      let enabled = fields.bool("enabled") ?? true
      try fields.validate()
      guard let url else { throw HTTPError(422, code: "validation_failed") }
      let (endpoint, secret) = try await store.create(
        url: url, eventTypes: types, enabled: enabled, by: actor)
      context.logger.notice(
        "webhook endpoint created",
        ["admin": .string(actor.name), "endpoint_id": .string(endpoint.id)])
      return try JSONCoding.response(Created(endpoint: endpoint, secret: secret), status: 201)
    }
    router.add(.get, "/admin/v1/webhook-endpoints") { request, context in
      _ = try auth.authenticate(request, context)
      try Self.noQuery(request)
      struct List: Encodable { var endpoints: [WebhookEndpoint] }
      return try JSONCoding.response(List(endpoints: try await store.list()))
    }
    router.add(.get, "/admin/v1/webhook-endpoints/{endpoint_id}") { request, context in
      _ = try auth.authenticate(request, context)
      return try JSONCoding.response(try await store.find(try Self.endpointId(context)))
    }
    router.add(.patch, "/admin/v1/webhook-endpoints/{endpoint_id}") { request, context in
      let actor = try auth.authenticate(request, context)
      let id = try Self.endpointId(context)
      var fields = try RequestFields(request: request)
      fields.rejectUnknown(allowed: ["url", "event_types", "enabled"])
      let change = WebhookStore.Change(
        url: readURL(&fields, required: false), eventTypes: Self.eventTypes(&fields),
        enabled: fields.bool("enabled"))
      try fields.validate()
      let endpoint = try await store.update(id, change, by: actor)
      context.logger.notice(
        "webhook endpoint changed",
        ["admin": .string(actor.name), "endpoint_id": .string(endpoint.id)])
      if change.enabled == true { wake() }
      return try JSONCoding.response(endpoint)
    }
    router.add(.delete, "/admin/v1/webhook-endpoints/{endpoint_id}") { request, context in
      let actor = try auth.authenticate(request, context)
      let id = try Self.endpointId(context)
      try await store.delete(id, by: actor)
      context.logger.notice(
        "webhook endpoint deleted",
        ["admin": .string(actor.name), "endpoint_id": .string(id.uuidString.lowercased())])
      return Response(status: 204)
    }
    router.add(.post, "/admin/v1/webhook-endpoints/{endpoint_id}/rotate-secret") {
      request, context in
      let actor = try auth.authenticate(request, context)
      let id = try Self.endpointId(context)
      var fields = try Self.optionalBody(request)
      fields.rejectUnknown(allowed: [])
      try fields.validate()
      let (endpoint, secret) = try await store.rotate(id, by: actor)
      context.logger.notice(
        "webhook secret rotated",
        ["admin": .string(actor.name), "endpoint_id": .string(endpoint.id)])
      return try JSONCoding.response(Created(endpoint: endpoint, secret: secret))
    }
    router.add(.post, "/admin/v1/webhook-endpoints/{endpoint_id}/replay") { request, context in
      let actor = try auth.authenticate(request, context)
      let id = try Self.endpointId(context)
      var fields = try RequestFields(request: request)
      let selection = try Self.selection(&fields)
      let queued = try await store.replay(id, selection, by: actor)
      context.logger.notice(
        "webhook events replayed",
        [
          "admin": .string(actor.name), "endpoint_id": .string(id.uuidString.lowercased()),
          "queued": .int(queued),
        ])
      wake()
      struct Replayed: Encodable { var queued: Int }
      return try JSONCoding.response(Replayed(queued: queued), status: 202)
    }
    router.add(.post, "/admin/v1/webhook-endpoints/{endpoint_id}/test") { request, context in
      let actor = try auth.authenticate(request, context)
      let id = try Self.endpointId(context)
      var fields = try Self.optionalBody(request)
      fields.rejectUnknown(allowed: [])
      try fields.validate()
      let user = WebhookStore.testUser(id.uuidString.lowercased())
      // The test user's state, in the shape every event carries (empty: it owns nothing).
      let state = try JSONCoding.text(try await entitlements.view(userId: user))
      let sent = try await store.sendTest(id, userState: state, by: actor)
      wake()
      struct Sent: Encodable {
        var eventId: String
        var deliveryId: Int64
        enum CodingKeys: String, CodingKey {
          case eventId = "event_id"
          case deliveryId = "delivery_id"
        }
      }
      return try JSONCoding.response(
        Sent(eventId: sent.eventId, deliveryId: sent.deliveryId), status: 202)
    }
    router.add(.get, "/admin/v1/webhook-deliveries") { request, context in
      _ = try auth.authenticate(request, context)
      let page = try await log.list(try Self.deliveryFilter(request.query))
      return try JSONCoding.response(ListPage("deliveries", page.deliveries, next: page.next))
    }
  }

  /// An endpoint with the secret it signs with: the answer of creation and rotation only.
  struct Created: Encodable {
    var endpoint: WebhookEndpoint
    var secret: String

    func encode(to encoder: any Encoder) throws {
      try endpoint.encode(to: encoder)
      var container = encoder.container(keyedBy: Key.self)
      try container.encode(secret, forKey: .secret)
    }
    enum Key: String, CodingKey { case secret }
  }

  /// The receiver's URL (`WebhookURLRule`).
  private func readURL(_ fields: inout RequestFields, required: Bool) -> String? {
    guard let text = fields.string("url", required: required, maxLength: WebhookURLRule.maxLength)
    else { return nil }
    if let problem = WebhookURLRule.problem(text, allowInsecure: allowInsecureURLs) {
      fields.fail("url", problem)
      return nil
    }
    return text
  }

  /// `event_types`: `["*"]` or 1–50 distinct dotted names such as `order.paid`.
  static func eventTypes(_ fields: inout RequestFields) -> [String]? {
    guard let value = fields.values["event_types"] else { return nil }
    let rule = "must be [\"*\"] or 1-\(maxEventTypes) distinct event types such as order.paid"
    guard case .array(let items) = value, (1...maxEventTypes).contains(items.count) else {
      fields.fail("event_types", rule)
      return nil
    }
    var types: [String] = []
    for item in items {
      guard case .string(let text) = item, !types.contains(text),
        WebhookEndpoint.isEventType(text) || (text == WebhookEndpoint.allTypes && items.count == 1)
      else {
        fields.fail("event_types", rule)
        return nil
      }
      types.append(text)
    }
    return types
  }

  /// `{event_id}`, `{from_position, to_position}` or `{from_time, to_time}`: one of the three.
  static func selection(_ fields: inout RequestFields) throws -> WebhookStore.Selection {
    fields.rejectUnknown(allowed: [
      "event_id", "from_position", "to_position", "from_time", "to_time",
    ])
    let eventId = fields.string("event_id", maxLength: 36)
    let fromPosition = fields.integer("from_position", range: 1...Int64.max)
    let toPosition = fields.integer("to_position", range: 1...Int64.max)
    let fromTime = fields.string("from_time", maxLength: 40)
    let toTime = fields.string("to_time", maxLength: 40)
    try fields.validate()
    let given = [
      eventId != nil, fromPosition != nil || toPosition != nil, fromTime != nil || toTime != nil,
    ].filter { $0 }.count
    let rule = "give event_id, or from_position and to_position, or from_time and to_time"
    guard given == 1 else {
      throw HTTPError(
        422, code: "validation_failed", detail: rule,
        fields: [FieldError(field: "event_id", message: rule)])
    }
    if let eventId {
      guard let uuid = UUID(uuidString: eventId) else {
        throw HTTPError(
          422, code: "validation_failed", detail: "event_id must be a UUID",
          fields: [FieldError(field: "event_id", message: "must be a UUID")])
      }
      return .event(uuid)
    }
    if let fromPosition, let toPosition {
      guard fromPosition <= toPosition else {
        throw HTTPError(
          422, code: "validation_failed", detail: "from_position must not be after to_position",
          fields: [FieldError(field: "from_position", message: "must be at most to_position")])
      }
      return .positions(from: fromPosition, to: toPosition)
    }
    if let fromTime, let toTime {
      guard let fromMs = Timestamp.parseMillisecond(fromTime),
        let toMs = Timestamp.parseMillisecond(toTime), fromMs <= toMs
      else {
        throw HTTPError(
          422, code: "validation_failed",
          detail: "from_time and to_time must be RFC 3339 times, from_time first",
          fields: [
            FieldError(field: "from_time", message: "must be an RFC 3339 time before to_time")
          ])
      }
      return .times(fromMs: fromMs, toMs: toMs)
    }
    throw HTTPError(
      422, code: "validation_failed", detail: rule,
      fields: [
        FieldError(
          field: fromPosition == nil && toPosition == nil ? "from_time" : "from_position",
          message: rule)
      ])
  }

  static func deliveryFilter(_ query: [String: String]) throws -> WebhookDeliveryLog.Filter {
    var problems: [FieldError] = []
    let page = PageRequest(
      numeric: query, known: ["endpoint_id", "state", "event_id"], problems: &problems,
      cursorRule: "must be the next_cursor of a previous page")
    var filter = WebhookDeliveryLog.Filter(limit: page.limit, before: page.before)
    if let text = query["endpoint_id"] {
      if let id = UUID(uuidString: text) {
        filter.endpointId = id
      } else {
        problems.append(FieldError(field: "endpoint_id", message: "must be a UUID"))
      }
    }
    if let text = query["event_id"] {
      if let id = UUID(uuidString: text) {
        filter.eventId = id
      } else {
        problems.append(FieldError(field: "event_id", message: "must be a UUID"))
      }
    }
    if let state = query["state"] {
      if let state = WebhookDeliveryState(rawValue: state) {
        filter.state = state
      } else {
        problems.append(
          FieldError(field: "state", message: "must be \(WebhookDeliveryState.names)"))
      }
    }
    try PageRequest.check(problems)
    return filter
  }

  private static func endpointId(_ context: Context) throws -> UUID {
    let text = context.parameters["endpoint_id"] ?? ""
    guard let id = UUID(uuidString: text) else {
      throw WebhookRefusal.endpointNotFound(String(text.prefix(36))).problem
    }
    return id
  }

  private static func noQuery(_ request: Request) throws {
    try PageRequest.check(
      request.query.keys.sorted().map { FieldError(field: $0, message: "is not a known filter") })
  }

  /// A body that may be left out entirely (no fields to send), or be `{}`.
  private static func optionalBody(_ request: Request) throws -> RequestFields {
    request.body.isEmpty ? RequestFields(values: [:]) : try RequestFields(request: request)
  }
}
