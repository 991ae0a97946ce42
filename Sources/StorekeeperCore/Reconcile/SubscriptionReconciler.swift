import AppStore
import Foundation
import Postgres
import StorekeeperLogging

/// Compares Storekeeper's subscribers with Apple's Get All Subscription Statuses and repairs
/// what disagrees, through the same effects a notification has (`NotificationEffects`), so a
/// lost notification is made good by the same code that would have applied it. Each repair is
/// recorded in `reconcile_repairs` with its run, in the database transaction that makes it.
package struct SubscriptionReconciler: Sendable {
  package enum Trigger: String, Sendable, PostgresEnum {
    case command
    case background
  }

  /// A subscription Apple answered for but whose answer cannot be used.
  struct Unusable: Error, CustomStringConvertible {
    var description: String
  }

  let database: PostgresPool
  /// Apple's production and sandbox Server APIs.
  let production: SubscriptionStatusClient
  let sandbox: SubscriptionStatusClient
  let verifier: SignedDataVerifier
  let settlement: SettlementService
  let catalog: CatalogRepository
  let clock: WallClock
  package let settings: ReconcileSettings
  let appleSettings: AppleConfigurationMonitor?
  let logger: Logger

  package init(
    database: PostgresPool, production: SubscriptionStatusClient, sandbox: SubscriptionStatusClient,
    verifier: SignedDataVerifier, settlement: SettlementService, catalog: CatalogRepository,
    clock: WallClock, settings: ReconcileSettings, appleSettings: AppleConfigurationMonitor?,
    logger: Logger
  ) {
    self.database = database
    self.production = production
    self.sandbox = sandbox
    self.verifier = verifier
    self.settlement = settlement
    self.catalog = catalog
    self.clock = clock
    self.settings = settings
    self.appleSettings = appleSettings
    self.logger = logger
  }

  private var claims: ReconcileClaims { ReconcileClaims(database: database, settings: settings) }

  /// One pass over at most `limit` subscriptions (all that qualify when nil).
  package func run(trigger: Trigger, dryRun: Bool, limit: Int?, dueOnly: Bool) async
    -> ReconcileSummary
  {
    var summary = ReconcileSummary(dryRun: dryRun)
    let runStartMs: Int64
    do {
      guard
        let row = try await database.query(
          "SELECT (extract(epoch FROM now()) * 1000)::bigint AS now"
        ).first
      else { throw Unusable(description: "no time from the database") }
      runStartMs = try row.decode("now")
    } catch {
      summary.failure = "database: \(error)"
      return summary
    }
    var pacer = ReconcilePacer(ratePerSecond: settings.ratePerSecond)
    var after = ""
    outer: while summary.failure == nil {
      let room = limit.map { $0 - summary.checked - summary.errors } ?? settings.batchSize
      guard room > 0 else { break }
      let batch: [ReconcileClaims.Candidate]
      do {
        batch =
          dryRun
          ? try await claims.peek(limit: min(room, settings.batchSize), after: after)
          : try await claims.claim(
            limit: min(room, settings.batchSize), dueOnly: dueOnly, runStartMs: runStartMs)
      } catch {
        summary.failure = "database: \(error)"
        break
      }
      guard !batch.isEmpty else { break }
      // A run is recorded once it has work: a background pass that finds nothing due leaves
      // no row behind.
      if !dryRun, summary.runId == nil {
        do {
          summary.runId = try await database.query(
            "INSERT INTO reconcile_runs (trigger) VALUES (\(trigger)) RETURNING id"
          ).first?.decode("id")
        } catch {
          summary.failure = "database: \(error)"
          try? await claims.release(batch.map(\.originalTransactionId))
          break
        }
      }
      after = batch.last?.originalTransactionId ?? after
      for (index, candidate) in batch.enumerated() {
        if let failure = await check(candidate, summary: &summary, pacer: &pacer, dryRun: dryRun) {
          summary.failure = failure
          if !dryRun {
            try? await claims.release(batch[index...].map(\.originalTransactionId))
          }
          break outer
        }
      }
    }
    await record(summary)
    return summary
  }

  /// Asks Apple about one subscription and repairs it; returns why the pass must stop, if it
  /// must (Apple unreachable, rate limiting, refusing the key; the database gone).
  private func check(
    _ candidate: ReconcileClaims.Candidate, summary: inout ReconcileSummary,
    pacer: inout ReconcilePacer, dryRun: Bool
  ) async -> String? {
    let original = candidate.originalTransactionId
    let client =
      candidate.environment == AppStoreEnvironment.sandbox.rawValue ? sandbox : production
    var answer: Result<SubscriptionStatuses, SubscriptionStatusClient.Failure>
    var attempt = 0
    while true {
      await pacer.wait()
      answer = await client.statuses(originalTransactionId: original)
      // Apple's rate limit: back off (1 s, 2 s, 4 s) before giving the pass up.
      guard case .failure(.rateLimited) = answer, attempt < 3 else { break }
      try? await Task.sleep(for: .seconds(1 << attempt))
      attempt += 1
    }
    let statuses: SubscriptionStatuses
    switch answer {
    case .success(let value):
      statuses = value
      appleSettings?.resolved(setting: .apiKey)
    case .failure(.unauthorized):
      appleSettings?.record(
        Misconfiguration(setting: .apiKey, status: 401, environment: candidate.environment))
      return "the App Store Server API refused the key (401): check APPLE_API_KEY_FILE, "
        + "APPLE_API_KEY_ID and APPLE_API_ISSUER_ID"
    case .failure(.rateLimited):
      return "the App Store Server API is rate limiting (429)"
    case .failure(.unreachable(let why)):
      return why
    case .failure(.notFound(let why)), .failure(.refused(let why)):
      return await failed(original, "Apple: \(why)", summary: &summary, dryRun: dryRun)
    }
    let apple: AppleSubscription
    do { apple = try verify(statuses, original: original) } catch {
      return await failed(original, "\(error)", summary: &summary, dryRun: dryRun)
    }
    do {
      if dryRun {
        let stored = try await database.withTransaction { tx in
          try await StoredSubscription.load(original, on: tx)
        }
        summary.checked += 1
        summary.repairs += SubscriptionDiscrepancy.repairs(stored: stored, apple: apple).map {
          .init(userId: stored.userId ?? "", originalTransactionId: original, repair: $0)
        }
        return nil
      }
      let (made, unapplied) = try await repair(original, apple: apple, runId: summary.runId ?? 0)
      summary.checked += 1
      summary.repairs += made
      if let unapplied {
        // Its other repairs were made; this one is the subscription's error (recorded with
        // them), so an operator sees what is missing.
        summary.errors += 1
        logger.warning(
          "subscription not reconciled",
          ["original_transaction_id": .string(original), "error": .string(unapplied)])
      }
      for repair in made {
        logger.notice(
          "subscription repaired to match Apple",
          [
            "original_transaction_id": .string(original), "user_id": .string(repair.userId),
            "kind": .string(repair.repair.kind),
          ])
      }
      return nil
    } catch let error as PostgresError where error.isUnavailable {
      return "database: \(error)"
    } catch {
      return await failed(original, "repair failed: \(error)", summary: &summary, dryRun: dryRun)
    }
  }

  /// Counts a subscription Apple could not be used for; the pass goes on.
  private func failed(
    _ original: String, _ why: String, summary: inout ReconcileSummary, dryRun: Bool
  ) async -> String? {
    summary.errors += 1
    logger.warning(
      "subscription not reconciled",
      ["original_transaction_id": .string(original), "error": .string(why)])
    guard !dryRun else { return nil }
    do { try await claims.finish(original, error: why, on: database) } catch {
      return "database: \(error)"
    }
    return nil
  }

  /// Apple's entry for the subscription, its JWS verified like any signed data.
  private func verify(_ statuses: SubscriptionStatuses, original: String) throws
    -> AppleSubscription
  {
    guard statuses.bundleId == nil || statuses.bundleId == verifier.configuration.bundleId else {
      throw Unusable(description: "Apple answered for another app")
    }
    guard let entry = statuses.last(originalTransactionId: original) else {
      throw Unusable(description: "Apple listed no subscription \(original)")
    }
    guard let status = entry.statusValue else {
      throw Unusable(description: "Apple's status \(entry.status) is unknown")
    }
    guard case .valid(let payload) = verifier.verifyTransaction(entry.signedTransactionInfo),
      let transaction = payload.verifiedTransaction
    else { throw Unusable(description: "signedTransactionInfo does not verify") }
    guard case .valid(let renewal) = verifier.verifyRenewalInfo(entry.signedRenewalInfo) else {
      throw Unusable(description: "signedRenewalInfo does not verify")
    }
    guard transaction.originalTransactionId == original,
      renewal.originalTransactionId == original
    else { throw Unusable(description: "Apple's signed data is about another subscription") }
    return AppleSubscription(
      latest: transaction, status: status,
      graceMs: status == .billingGracePeriod ? renewal.gracePeriodExpiresDate : nil,
      familyShared: payload.inAppOwnershipType == InAppOwnershipType.familyShared.rawValue,
      signedMs: payload.signedDate)
  }

  /// Compares under lock and repairs, in one database transaction with the records of the
  /// repairs and the check: a notification or another pass arriving at the same time either
  /// went first (and this finds nothing to repair) or waits.
  /// The repairs made, and why one could not be (its other repairs are made all the same).
  private func repair(_ original: String, apple: AppleSubscription, runId: Int64) async throws
    -> (made: [ReconcileSummary.Repair], unapplied: String?)
  {
    try await database.withTransaction { tx in
      let stored = try await StoredSubscription.load(original, on: tx)
      guard let userId = stored.userId else { throw Unusable(description: "no owner any more") }
      // A notification Apple signed after this answer (applied while Apple was asked, or
      // waiting to be) is its later word: repairing to the answer would undo it, as a refund
      // applied meanwhile would be reversed. The next pass asks again.
      if try await Self.notifiedSince(apple, original: original, on: tx) {
        try await claims.finish(original, error: nil, on: tx)
        return ([], nil)
      }
      let repairs = SubscriptionDiscrepancy.repairs(stored: stored, apple: apple)
      let effects = NotificationEffects(
        settlement: settlement, catalog: catalog, clock: clock, tx: tx, uuid: "",
        cause: .reconcile, eventDetail: .object(["reconcile_run": .number(String(runId))]),
        source: .signedTransaction)
      var made: [SubscriptionRepair] = []
      var unapplied: String?
      for repair in repairs {
        // The state a renewal would have set (active) is what the state's repair starts from;
        // with that renewal not recorded, the state may already be Apple's: nothing to repair.
        if unapplied != nil, case .stateChanged(_, _, let status, let graceMs) = repair,
          stored.status == status, stored.graceMs == graceMs
        {
          continue
        }
        let outcome = try await apply(repair, original: original, effects: effects)
        guard outcome.state == .processed else {
          throw Unusable(description: "\(repair.kind) could not apply: \(outcome.result.rawValue)")
        }
        // A renewal that recorded nothing (its product is not in the catalog, or Apple refunded
        // it first) repaired nothing: said as this subscription's error, not recorded as a
        // repair that every later pass would find to make again.
        if case .renewed = repair, outcome.result != .renewalRecorded,
          outcome.result != .datesUpdated
        {
          unapplied = "renewed could not apply: \(outcome.result.rawValue)"
          continue
        }
        made.append(repair)
        try await tx.execute(
          """
          INSERT INTO reconcile_repairs (run_id, user_id, original_transaction_id, transaction_id,
            kind, was, became)
          VALUES (\(runId), \(userId), \(original), \(repair.transactionId ?? apple.latest.transactionId),
            \(repair.kind), \(try JSONCoding.text(repair.was))::jsonb,
            \(try JSONCoding.text(repair.became))::jsonb)
          """)
      }
      try await claims.finish(original, error: unapplied, on: tx)
      return (
        made.map { .init(userId: userId, originalTransactionId: original, repair: $0) }, unapplied
      )
    }
  }

  /// Whether Apple signed a notification about the subscription after `apple`'s answer.
  static func notifiedSince(
    _ apple: AppleSubscription, original: String, on tx: PostgresTransaction
  ) async throws -> Bool {
    guard let signedMs = apple.signedMs else { return false }
    var query: PostgresQuery = """
      SELECT 1 FROM apple_notifications
      WHERE original_transaction_id = \(original) AND signed_date >
      """
    query.append(TransactionRecord.time(signedMs))
    query.append(" LIMIT 1")
    return try await !tx.query(query).isEmpty
  }

  private func apply(_ repair: SubscriptionRepair, original: String, effects: NotificationEffects)
    async throws -> NotificationOutcome
  {
    // Events name the run that repaired, as a notification's events name the notification.
    var notice: [String: JSONValue] = [
      "reconcile_repair": .string(repair.kind), "original_transaction_id": .string(original),
    ]
    if let detail = effects.eventDetail, case .object(let fields) = detail {
      notice.merge(fields) { $1 }
    }
    switch repair {
    case .renewed(let transaction):
      // Named as DID_RENEW names its period, so a receiver (and that notification, if it comes
      // after all) knows which period this was.
      let renewed = notice.merging(NotificationEffects.period(transaction)) { $1 }
      return try await effects.renew(
        transaction, events: [EventDraft(.subscriptionRenewed, renewed)], notice: notice)
    case .revoked(let transaction, let reason, _):
      return try await effects.revoke(transaction, reason: reason, notice: notice)
    case .refundReversed(let transaction, _):
      return try await effects.reinstate(transaction, notice: notice)
    case .expiryChanged(let transaction, _):
      try await TransactionRecord.updateExpiry(transaction, on: effects.tx)
      try await effects.settlement.orders.outbox.append(
        [], forSubscription: original, cause: notice, on: effects.tx)
      return .processed(.datesUpdated)
    case .stateChanged(_, _, let status, let grace):
      let changed = try await effects.subscriptionState(original, status, graceMs: grace)
      // The event the lost notification (DID_FAIL_TO_RENEW, EXPIRED) would have written, once:
      // that notification, arriving late, writes none for a state already recorded.
      var said = notice
      let events: [EventDraft]
      switch status {
      case _ where !changed: events = []
      case .expired: events = [EventDraft(.subscriptionExpired, said)]
      case .gracePeriod, .billingRetry:
        said["status"] = .string(status.rawValue)
        if let grace { said["grace_expires_at"] = EventTime.value(ms: grace) }
        events = [EventDraft(.subscriptionBillingProblem, said)]
      case .active: events = []
      }
      try await effects.settlement.orders.outbox.append(
        events, forSubscription: original, cause: notice, on: effects.tx)
      return .processed(NotificationResult(status))
    }
  }

  private func record(_ summary: ReconcileSummary) async {
    if let runId = summary.runId {
      do {
        try await database.execute(
          """
          UPDATE reconcile_runs SET finished_at = now(), checked = \(summary.checked),
            repaired = \(summary.repaired), errors = \(summary.errors), last_error = \(summary.failure)
          WHERE id = \(runId)
          """)
      } catch {
        logger.warning("reconcile run could not be recorded", ["error": .string("\(error)")])
      }
    }
    let fields: [String: LogValue] = [
      "checked": .int(summary.checked), "repaired": .int(summary.repaired),
      "errors": .int(summary.errors), "dry_run": .bool(summary.dryRun),
    ]
    if let failure = summary.failure {
      logger.warning(
        "reconcile pass stopped early; the rest waits for the next pass",
        fields.merging(["error": .string(failure)]) { $1 })
    } else if summary.repaired > 0 || summary.errors > 0 {
      logger.notice("reconcile pass finished", fields)
    } else if summary.checked == 0 {
      // The background pass ticks often and usually finds nothing due.
      logger.debug("reconcile pass found nothing due", fields)
    } else {
      logger.info("reconcile pass found nothing to repair", fields)
    }
  }
}
