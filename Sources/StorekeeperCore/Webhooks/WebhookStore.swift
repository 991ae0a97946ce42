import Foundation
import Postgres

/// The admin side of webhooks on PostgreSQL: endpoints, their secrets, replays and test
/// events. Every change is audited in its own transaction (`AuditLog.record`). Secrets leave
/// only through `create` and `rotate`, which return them once.
package struct WebhookStore: Sendable {
  let database: PostgresPool
  let settings: WebhookSettings

  package init(database: PostgresPool, settings: WebhookSettings) {
    self.database = database
    self.settings = settings
  }

  /// What a PATCH changes (nil: unchanged).
  package struct Change: Sendable {
    var url: String?
    var eventTypes: [String]?
    package var enabled: Bool?

    package init(url: String? = nil, eventTypes: [String]? = nil, enabled: Bool? = nil) {
      self.url = url
      self.eventTypes = eventTypes
      self.enabled = enabled
    }
  }

  /// Which events a replay queues again.
  package enum Selection: Sendable {
    case event(UUID)
    /// Positions (the events' insertion order), inclusive.
    case positions(from: Int64, to: Int64)
    /// Creation times (epoch milliseconds), inclusive.
    case times(fromMs: Int64, toMs: Int64)
  }

  private static func lookUp(_ id: UUID, on executor: any PostgresExecutor, lock: Bool = false)
    async throws -> WebhookEndpoint
  {
    // A deleted endpoint is gone for admins at once, though its row stays until the webhook
    // loop has removed its deliveries (`WebhookQueue.removeDeleted`).
    var query: PostgresQuery = """
      SELECT \(unescaped: WebhookEndpoint.columns) FROM webhook_endpoints
      WHERE id = \(id) AND deleted_at IS NULL
      """
    // Against concurrent edits, deletion and replays of the endpoint, and no stronger: every
    // event written fans out to the endpoint, and the fan-out and the deliveries' foreign key
    // check take a key-share lock on this row, which FOR UPDATE would make wait for the whole
    // admin transaction (a replay scans the events table). Locked after a deletion committed,
    // the row is re-read and no longer matches: not found.
    if lock { query.append(" FOR NO KEY UPDATE") }
    guard let row = try await executor.queryFirst(query) else {
      throw WebhookRefusal.endpointNotFound(id.uuidString.lowercased())
    }
    return try WebhookEndpoint(row: row)
  }

  package func list() async throws -> [WebhookEndpoint] {
    try await database.query(
      """
      SELECT \(unescaped: WebhookEndpoint.columns) FROM webhook_endpoints
      WHERE deleted_at IS NULL ORDER BY created_at, id
      """
    ).map(WebhookEndpoint.init(row:))
  }

  package func find(_ id: UUID) async throws -> WebhookEndpoint {
    try await Self.lookUp(id, on: database)
  }

  /// A new endpoint and its secret (the only time the secret is shown).
  package func create(url: String, eventTypes: [String], enabled: Bool, by actor: AdminActor)
    async throws -> (endpoint: WebhookEndpoint, secret: String)
  {
    let secret = WebhookSecret.generate()
    let id = UUID()
    let endpoint = try await database.withTransaction { tx in
      // Serialises creations, so two at once cannot both pass the count.
      try await tx.execute("SELECT pg_advisory_xact_lock(hashtext('webhook_endpoints'))")
      let count: Int64 =
        try await tx.queryFirst(
          "SELECT count(*)::bigint AS n FROM webhook_endpoints WHERE deleted_at IS NULL")?
        .decode("n") ?? 0
      guard count < settings.maxEndpoints else {
        throw WebhookRefusal.tooManyEndpoints(settings.maxEndpoints)
      }
      try await tx.execute(
        """
        INSERT INTO webhook_endpoints (id, url, event_types, enabled, secret)
        VALUES (\(id), \(url), \(WebhookEndpoint.storedTypes(eventTypes))::text[], \(enabled),
                \(secret))
        """)
      let endpoint = try await Self.lookUp(id, on: tx)
      try await AuditLog.record(
        .webhookEndpointCreated, by: actor, targetId: endpoint.id, before: WebhookEndpoint?.none,
        after: endpoint, on: tx)
      return endpoint
    }
    return (endpoint, secret)
  }

  package func update(_ id: UUID, _ change: Change, by actor: AdminActor) async throws
    -> WebhookEndpoint
  {
    try await database.withTransaction { tx in
      let before = try await Self.lookUp(id, on: tx, lock: true)
      var query: PostgresQuery = "UPDATE webhook_endpoints SET updated_at = now()"
      if let url = change.url { query.append(", url = \(url)") }
      if let types = change.eventTypes {
        query.append(", event_types = \(WebhookEndpoint.storedTypes(types))::text[]")
      }
      if let enabled = change.enabled {
        query.append(", enabled = \(enabled)")
        // Enabling again starts a fresh count towards automatic disabling.
        if enabled && !before.enabled {
          query.append(", disabled_reason = NULL, failing_since = NULL")
        } else if !enabled {
          query.append(", disabled_reason = NULL")
        }
      }
      query.append(" WHERE id = \(id)")
      try await tx.execute(query)
      let after = try await Self.lookUp(id, on: tx)
      try await AuditLog.record(
        .webhookEndpointUpdated, by: actor, targetId: after.id, before: before, after: after,
        on: tx)
      return after
    }
  }

  /// Marks the endpoint deleted: from then on it is not found, takes no event and is sent
  /// nothing. Its row and deliveries are removed later by the webhook loop, in batches
  /// (`WebhookQueue.removeDeleted`). Deleting the row here cascaded over every delivery kept for
  /// `WEBHOOK_RETENTION` while holding the endpoint, and every event written meanwhile (a
  /// payment, a spend, a refund notification) waited on its foreign key check and then failed
  /// it (23503). The mark is a non-key update, which that check's key-share lock passes. It
  /// disables the endpoint too, so an instance of the previous release, which knows no
  /// `deleted_at`, stops queuing and sending to it as well.
  package func delete(_ id: UUID, by actor: AdminActor) async throws {
    try await database.withTransaction { tx in
      let before = try await Self.lookUp(id, on: tx, lock: true)
      try await tx.execute(
        """
        UPDATE webhook_endpoints SET deleted_at = now(), enabled = false, updated_at = now()
        WHERE id = \(id)
        """)
      try await AuditLog.record(
        .webhookEndpointDeleted, by: actor, targetId: before.id, before: before,
        after: WebhookEndpoint?.none, on: tx)
    }
  }

  /// A new secret; the current one keeps signing until the overlap ends. A secret rotated out
  /// earlier, whose overlap is still running, stops at once.
  package func rotate(_ id: UUID, by actor: AdminActor) async throws
    -> (endpoint: WebhookEndpoint, secret: String)
  {
    let secret = WebhookSecret.generate()
    let endpoint = try await database.withTransaction { tx in
      let before = try await Self.lookUp(id, on: tx, lock: true)
      try await tx.execute(
        """
        UPDATE webhook_endpoints
        SET previous_secret = secret, secret = \(secret), updated_at = now(),
            previous_secret_expires_at = now() + \(settings.secretOverlapMs) * interval '1 millisecond'
        WHERE id = \(id)
        """)
      let after = try await Self.lookUp(id, on: tx)
      try await AuditLog.record(
        .webhookSecretRotated, by: actor, targetId: after.id, before: before, after: after, on: tx)
      return after
    }
    return (endpoint, secret)
  }

  /// Queues the selected events to the endpoint again; returns how many.
  package func replay(_ id: UUID, _ selection: Selection, by actor: AdminActor) async throws -> Int
  {
    try await database.withTransaction { tx in
      let endpoint = try await Self.lookUp(id, on: tx, lock: true)
      let match: PostgresQuery
      switch selection {
      case .event(let eventId):
        // One event named by id is sent whatever the endpoint's event types say, but never
        // one the endpoint is never sent at all (as a range leaves them out).
        try await Self.checkReplayable(eventId, to: endpoint, on: tx)
        match = "e.id = \(eventId)"
      case .positions(let from, let to):
        match = "e.position BETWEEN \(from) AND \(to) AND \(Self.filter(endpoint))"
      case .times(let fromMs, let toMs):
        // Whole milliseconds, both inclusive: times are stored to the microsecond and shown to
        // the millisecond, so an event's time copied as `to_time` names its millisecond.
        match = """
          e.created_at >= timestamptz 'epoch' + \(fromMs)::bigint * interval '1 millisecond'
          AND e.created_at < timestamptz 'epoch' + (\(toMs)::bigint + 1) * interval '1 millisecond'
          AND \(Self.filter(endpoint))
          """
      }
      let count: Int64 =
        try await tx.queryFirst("SELECT count(*)::bigint AS n FROM events e WHERE \(match)")?
        .decode("n") ?? 0
      if case .event(let eventId) = selection, count == 0 {
        throw WebhookRefusal.eventNotFound(eventId.uuidString.lowercased())
      }
      guard count <= settings.replayMax else {
        throw WebhookRefusal.replayTooLarge(count: count, max: settings.replayMax)
      }
      let queued = try await tx.execute(
        """
        INSERT INTO webhook_deliveries (endpoint_id, event_position, user_id, sequence, kind)
        SELECT \(id), e.position, e.user_id, e.sequence, \(WebhookDeliveryKind.replay) FROM events e WHERE \(match)
        ORDER BY e.position
        """)
      struct Replayed: Encodable {
        var selection: String
        var queued: Int
      }
      try await AuditLog.record(
        .webhookEventsReplayed, by: actor, targetId: endpoint.id, before: Replayed?.none,
        after: Replayed(selection: "\(selection)", queued: queued), on: tx)
      return queued
    }
  }

  /// Refuses an event this endpoint is never sent (docs/EVENTS_AND_WEBHOOKS.md): another
  /// endpoint's `webhook.test`, whose pseudo-user names the endpoint it was for, and
  /// `experiment.exposed`, which is the event feed's only.
  private static func checkReplayable(
    _ eventId: UUID, to endpoint: WebhookEndpoint, on tx: PostgresTransaction
  ) async throws {
    guard
      let row = try await tx.queryFirst(
        "SELECT type, user_id FROM events WHERE id = \(eventId)")
    else { throw WebhookRefusal.eventNotFound(eventId.uuidString.lowercased()) }
    let type = EventType(rawValue: try row.decode("type", as: String.self))
    let user: String = try row.decode("user_id")
    if type == .experimentExposed {
      throw WebhookRefusal.eventNotForEndpoint(
        id: eventId.uuidString.lowercased(),
        why: "experiment.exposed is in the event feed only, never sent to webhooks")
    }
    if type == .webhookTest, user != testUser(endpoint.id) {
      throw WebhookRefusal.eventNotForEndpoint(
        id: eventId.uuidString.lowercased(),
        why: "it is another endpoint's webhook.test event, sent to that endpoint only")
    }
  }

  /// The events of a range this endpoint takes: its filter, and never another's test events.
  private static func filter(_ endpoint: WebhookEndpoint) -> PostgresQuery {
    let types = WebhookEndpoint.storedTypes(endpoint.eventTypes)
    return
      "e.type NOT IN (\(EventType.webhookTest.rawValue), \(EventType.experimentExposed.rawValue)) AND (\(types)::text[] IS NULL OR e.type = ANY (\(types)::text[]))"
  }

  /// The user a test event is about: one per endpoint, so its sequence stays gap-free for that
  /// endpoint and no real user's sequence is touched.
  package static func testUser(_ endpoint: String) -> String { "webhook-test:" + endpoint }

  /// Writes a `webhook.test` event and queues it to this endpoint only.
  package func sendTest(_ id: UUID, userState: String, by actor: AdminActor) async throws
    -> (eventId: String, deliveryId: Int64)
  {
    let eventId = UUID()
    return try await database.withTransaction { tx in
      let endpoint = try await Self.lookUp(id, on: tx, lock: true)
      let user = Self.testUser(endpoint.id)
      let data = try JSONCoding.text(["endpoint_id": endpoint.id, "requested_by": actor.name])
      let row = try await tx.queryFirst(
        """
        WITH seq AS (
          INSERT INTO user_event_sequences (user_id, last_sequence) VALUES (\(user), 1)
          ON CONFLICT (user_id)
          DO UPDATE SET last_sequence = user_event_sequences.last_sequence + 1
          RETURNING last_sequence),
        event AS (
          INSERT INTO events (id, type, user_id, sequence, data, user_state)
          SELECT \(eventId), 'webhook.test', \(user), last_sequence, \(data)::jsonb,
                 \(userState)::jsonb
          FROM seq RETURNING position, sequence)
        INSERT INTO webhook_deliveries (endpoint_id, event_position, user_id, sequence, kind)
        SELECT \(id), position, \(user), sequence, \(WebhookDeliveryKind.test) FROM event
        RETURNING id
        """)
      guard let deliveryId: Int64 = try row?.decode("id") else {
        throw WebhookRefusal.endpointNotFound(endpoint.id)
      }
      struct Sent: Encodable {
        var eventId: String
        var deliveryId: Int64
        enum CodingKeys: String, CodingKey {
          case eventId = "event_id"
          case deliveryId = "delivery_id"
        }
      }
      let sent = Sent(eventId: eventId.uuidString.lowercased(), deliveryId: deliveryId)
      try await AuditLog.record(
        .webhookTestSent, by: actor, targetId: endpoint.id, before: Sent?.none, after: sent,
        on: tx)
      return (sent.eventId, deliveryId)
    }
  }
}
