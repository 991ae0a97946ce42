import Foundation
import GooglePlay
import Postgres
import StorekeeperLogging

/// Real-time developer notifications: stored once by `messageId` (`receive`), then applied in
/// arrival order by reading the purchase back from the Developer API, since a notification only
/// says that something changed. Effects go through the same orders, ledger and events as
/// Apple's: a renewal pays an order of its own, a revocation or void closes the order as refunded
/// and takes its credit back, a subscription on hold or paused stops granting, a replaced
/// purchase (`linkedPurchaseToken`) stops granting. A push about a purchase nobody reported
/// settles the order it names, if any (`unreported`). A push about another package, a test, or
/// an unreported token that names no order of this server's is recorded and has no effect.
package struct GoogleNotificationService: Sendable {
  let store: GoogleNotificationStore
  let orders: OrderRepository
  let catalog: CatalogRepository
  let client: GooglePlayClient
  let monitor: GooglePlayMonitor
  /// The report's settlement, for a purchase whose push comes and whose report does not.
  let settlement: GoogleSettlement
  let clock: WallClock
  let logger: Logger
  /// Wakes the report retry worker, which settles reports this push made due.
  let wakeReports: @Sendable () -> Void
  /// `REFUND_POLICY`, for what a void or revocation takes back.
  let refundPolicy: RefundPolicy

  package init(
    store: GoogleNotificationStore, orders: OrderRepository, catalog: CatalogRepository,
    client: GooglePlayClient, monitor: GooglePlayMonitor, settlement: GoogleSettlement,
    clock: WallClock, logger: Logger,
    refundPolicy: RefundPolicy = .debt, wakeReports: @escaping @Sendable () -> Void
  ) {
    self.refundPolicy = refundPolicy
    self.store = store
    self.orders = orders
    self.catalog = catalog
    self.client = client
    self.monitor = monitor
    self.settlement = settlement
    self.clock = clock
    self.logger = logger
    self.wakeReports = wakeReports
  }

  var database: PostgresPool { store.database }

  /// Stores a verified push; false for a redelivery of one stored before.
  package func receive(_ push: PubSubPush) async throws -> Bool {
    try await store.insert(push, packageName: client.packageName)
  }

  /// Applies every due push, oldest first.
  package func processPending() async {
    do {
      while true {
        let due = try await store.claimDue(limit: 20)
        if due.isEmpty { return }
        for push in due { await process(push) }
      }
    } catch {
      logger.warning("Google notification pass failed", ["error": .string("\(error)")])
    }
  }

  /// What applying a push came to.
  enum Outcome {
    case done(GoogleNotificationStore.State, String)
    case retry(String)
  }

  func process(_ push: GoogleNotificationStore.Due) async {
    let fields: [String: LogValue] = [
      "message_id": .string(push.messageId), "kind": .string(push.kind.rawValue),
      "type": .int(push.notificationType ?? 0), "attempt": .int(push.attempts),
    ]
    do {
      let outcome: Outcome
      if let token = push.purchaseToken {
        outcome = try await apply(push, token: token)
      } else {
        outcome = .done(.ignored, "no_purchase_token")
      }
      switch outcome {
      case .done(let state, let result):
        try await store.finish(push.messageId, state: state, result: result)
        logger.notice(
          "Google notification applied",
          fields.merging(["state": .string(state.rawValue), "result": .string(result)]) { $1 })
      case .retry(let reason):
        try await store.retryLater(push.messageId, attempt: push.attempts, reason: reason)
        logger.warning(
          "Google notification waits on Google", fields.merging(["reason": .string(reason)]) { $1 })
      }
    } catch let conflict as PostgresError
      where (conflict.isTransientConflict || conflict.isForeignKeyViolation)
      && push.attempts < NotificationService.conflictAttempts
    {
      // A deadlock or serialization failure rolled the effects back and passes, as does a
      // foreign key refused for a row deleted under it (`isForeignKeyViolation`): applied
      // again later, as Apple's notifications are, instead of kept as failed for good.
      try? await store.retryLater(push.messageId, attempt: push.attempts, reason: "\(conflict)")
      logger.warning(
        "Google notification lost a conflict; applied again later",
        fields.merging(["error": .string("\(conflict)")]) { $1 })
    } catch let transient as PostgresError
      where transient.isTransient && !transient.isTransientConflict
    {
      // The database went away mid-apply (a restart, a failover, a pool starved) or refused it
      // for a state that passes (a lock or statement timeout, a full disk, a node a failover
      // made read-only): nothing was applied, and the push stays pending, due again after the
      // retry delay (or its lease, when the database cannot even be told that), as Apple's
      // notifications are. Kept as failed, nothing would ever apply it: Pub/Sub was answered
      // when it was stored.
      try? await store.retryLater(push.messageId, attempt: push.attempts, reason: "\(transient)")
      logger.warning(
        "Google notification not applied: the database is unavailable or refused it for now; applied again later",
        fields.merging(["error": .string("\(transient)")]) { $1 })
    } catch {
      try? await store.finish(
        push.messageId, state: .failed, result: String("\(error)".prefix(500)))
      logger.error(
        "Google notification failed", fields.merging(["error": .string("\(error)")]) { $1 })
    }
  }

  /// The purchase as stored, with its product.
  struct Known: Sendable {
    var tradeNo: String
    var userId: String
    var product: Product
    var kind: GooglePurchase.Kind
    var orderId: String
    var environment: String
    var revoked: Bool
    /// The row's `updated_at` as read: a change since (a transfer, another read-back of
    /// Google applied first) makes what was read here stale.
    var updatedAt: String
  }

  func known(_ token: String) async throws -> Known? {
    guard
      let row = try await database.query(
        """
        SELECT trade_no, user_id, product_id, kind, order_id, environment,
          revoked_at IS NOT NULL AS revoked, updated_at::text AS updated
        FROM google_purchases WHERE purchase_token = \(token) AND trade_no IS NOT NULL
        """
      ).first,
      let product = try await catalog.product(try row.decode("product_id"))
    else { return nil }
    return Known(
      tradeNo: try row.decode("trade_no"), userId: try row.decode("user_id"), product: product,
      kind: try row.decode("kind"), orderId: try row.decode("order_id"),
      environment: try row.decode("environment"), revoked: try row.decode("revoked"),
      updatedAt: try row.decode("updated"))
  }

  func apply(_ push: GoogleNotificationStore.Due, token: String) async throws -> Outcome {
    guard let purchase = try await known(token) else {
      // Nobody reported it yet: a report waiting on it (pending at Google, say) is due now, and
      // the order the purchase names is paid here all the same, since the woken report may
      // name another order (and be refused) or be a restore by someone else. The order's lock
      // and the token's claim make whichever comes second a replay. A push that pays nothing
      // leaves the purchase to the reports woken, or to the app's report still to come.
      let woken = try await wakeReports(for: token)
      let outcome = try await unreported(push, token: token)
      if woken > 0, case .done(.ignored, _) = outcome { return .done(.processed, "reports_due") }
      return outcome
    }
    switch push.kind {
    case .voidedPurchase:
      return try await voided(token, purchase)
    case .oneTimeProduct:
      return .done(.processed, "already_settled")
    case .subscription:
      if push.notificationType == SubscriptionNotificationType.revoked.rawValue {
        return try await voided(token, purchase, revocation: true)
      }
      return try await subscriptionChanged(token, purchase)
    case .test:
      return .done(.ignored, "test_notification")
    }
  }

  /// Makes the pending reports that carry `token` due now.
  private func wakeReports(for token: String) async throws -> Int {
    let rows = try await database.query(
      """
      UPDATE trade_reports SET next_attempt_at = \(clock.now()), updated_at = now()
      WHERE outcome = \(ReportOutcome.pending) AND proof_hash = \(Proof.googlePurchase(token).hash)
      RETURNING id
      """)
    if !rows.isEmpty { wakeReports() }
    return rows.count
  }

  /// What a failed read-back means for the push.
  func outcome(of failure: GooglePlayFailure) -> Outcome {
    switch failure {
    case .unknownToken: return .done(.ignored, "unknown_to_google")
    case .credentialsRefused(let status, let text):
      monitor.record(status.map { "Google answered \($0): \(text)" } ?? text)
      return .retry(GooglePurchaseVerifier.describe(failure))
    case .retryable: return .retry(GooglePurchaseVerifier.describe(failure))
    case .badRequest, .unexpected: return .done(.failed, GooglePurchaseVerifier.describe(failure))
    }
  }
}
