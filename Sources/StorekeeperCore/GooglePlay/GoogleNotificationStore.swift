import Foundation
import GooglePlay
import Postgres

/// `google_notifications`: every push stored once by Pub/Sub's `messageId` before it is
/// answered, so a redelivery is recognised and a push whose effect waits on Google is applied
/// later by whichever instance takes it (`FOR UPDATE SKIP LOCKED`, then a lease).
package struct GoogleNotificationStore: Sendable {
  let database: PostgresPool
  let clock: WallClock
  let leaseMs: Int64
  let policy: RetryPolicy

  package init(database: PostgresPool, clock: WallClock, baseMs: Int64, leaseMs: Int64) {
    self.database = database
    self.clock = clock
    self.leaseMs = leaseMs
    policy = RetryPolicy(baseMs: baseMs, capMs: 600_000, windowMs: 7 * 86_400_000)
  }

  package enum Kind: String, Sendable, PostgresEnum {
    case oneTimeProduct = "one_time_product"
    case subscription
    case voidedPurchase = "voided_purchase"
    case test
  }

  package enum State: String, Sendable, CaseIterable, PostgresEnum {
    case pending, processed, ignored, failed
  }

  /// A stored push to apply.
  package struct Due: Sendable {
    package var messageId: String
    package var kind: Kind
    package var notificationType: Int?
    package var purchaseToken: String?
    /// A one-time product's id (`oneTimeProductNotification.sku`): `products.get` needs it.
    package var sku: String?
    package var attempts: Int
    /// Arrival order: pushes are applied in it.
    var seq: Int64
  }

  /// Stores the push; false when its `messageId` was stored before (a redelivery).
  func insert(_ push: PubSubPush, packageName: String) async throws -> Bool {
    let n = push.notification
    let (kind, type, data) = Self.describe(n)
    let (state, result): (State, String?) =
      if n.packageName != packageName {
        (.ignored, "unknown_package")
      } else if kind == .test {
        (.ignored, "test_notification")
      } else {
        (.pending, nil)
      }
    var query: PostgresQuery = """
      INSERT INTO google_notifications (message_id, subscription, package_name, kind,
        notification_type, purchase_token, data, state, result, next_attempt_at, event_time,
        processed_at)
      VALUES (\(push.messageId), \(push.subscription), \(n.packageName), \(kind), \(type),
        \(n.purchaseToken), \(try JSONCoding.text(data))::jsonb, \(state), \(result),
        \(state == .pending ? clock.now() : nil),
      """
    query.append(TransactionRecord.time(n.eventTimeMillis))
    query.append(
      """
      , \(state == .pending ? nil : clock.now()))
      ON CONFLICT (message_id) DO NOTHING RETURNING message_id
      """)
    return try await !database.query(query).isEmpty
  }

  static func describe(_ n: DeveloperNotification) -> (Kind, Int?, JSONValue) {
    var data: [String: JSONValue] = [
      "version": .string(n.version), "packageName": .string(n.packageName),
      "eventTimeMillis": .string(String(n.eventTimeMillis)),
    ]
    switch n.content {
    case .oneTimeProduct(let p):
      data["oneTimeProductNotification"] = .object([
        "notificationType": .number(String(p.notificationType)), "sku": .string(p.sku),
      ])
      return (.oneTimeProduct, p.notificationType, .object(data))
    case .subscription(let s):
      data["subscriptionNotification"] = .object([
        "notificationType": .number(String(s.notificationType)),
        "subscriptionId": s.subscriptionId.map(JSONValue.string) ?? .null,
      ])
      return (.subscription, s.notificationType, .object(data))
    case .voidedPurchase(let v):
      data["voidedPurchaseNotification"] = .object([
        "orderId": v.orderId.map(JSONValue.string) ?? .null, "productType": .number(String(v.productType)),
        "refundType": .number(String(v.refundType)),
      ])
      return (.voidedPurchase, v.refundType, .object(data))
    case .test(let version):
      data["testNotification"] = .object(["version": .string(version)])
      return (.test, nil, .object(data))
    }
  }

  /// Takes up to `limit` due pushes, oldest first, for this worker.
  func claimDue(limit: Int) async throws -> [Due] {
    let now = clock.now()
    return try await database.query(
      """
      UPDATE google_notifications n SET attempts = n.attempts + 1,
        next_attempt_at = \(now.addingMs(leaseMs))
      WHERE n.message_id = ANY (ARRAY(
        SELECT message_id FROM google_notifications
        WHERE state = \(State.pending) AND next_attempt_at <= \(now)
        ORDER BY seq LIMIT \(limit) FOR UPDATE SKIP LOCKED))
      RETURNING n.message_id, n.kind, n.notification_type, n.purchase_token, n.attempts, n.seq,
        n.data #>> '{oneTimeProductNotification,sku}' AS sku
      """
    ).map { row in
      Due(
        messageId: try row.decode("message_id"), kind: try row.decode("kind"),
        notificationType: try row.decodeIfPresent("notification_type", as: Int32.self).map(
          Int.init),
        purchaseToken: try row.decodeIfPresent("purchase_token"),
        sku: try row.decodeIfPresent("sku"),
        attempts: try row.decode("attempts"),
        seq: try row.decode("seq"))
    }.sorted { $0.seq < $1.seq }
  }

  func finish(_ messageId: String, state: State, result: String) async throws {
    try await database.execute(
      """
      UPDATE google_notifications SET state = \(state), result = \(result),
        processed_at = \(clock.now()), next_attempt_at = NULL
      WHERE message_id = \(messageId) AND state = \(State.pending)
      """)
  }

  func retryLater(_ messageId: String, attempt: Int, reason: String) async throws {
    let atMs = clock.milliseconds + policy.delayMs(afterAttempt: attempt)
    try await database.execute(
      """
      UPDATE google_notifications SET result = \(String(reason.prefix(500))),
        next_attempt_at = \(Date(milliseconds: atMs))
      WHERE message_id = \(messageId) AND state = \(State.pending)
      """)
  }
}
