import AppStore
import Postgres
import StorekeeperLogging

/// App Store Server Notifications V2: stored durably first (deduplicated on
/// `notificationUUID`), answered at once, applied afterwards by `processPending`, each in one
/// database transaction. A notification about a transaction not yet known waits ('deferred')
/// until settlement records it; one of a type Storekeeper does not know waits as 'unhandled'.
package struct NotificationService: Sendable {
  let database: PostgresPool
  let verifier: SignedDataVerifier
  let settlement: SettlementService
  let catalog: CatalogRepository
  let clock: WallClock
  let logger: Logger
  let deferredWakes: DeferredWakeSchedule

  package init(
    database: PostgresPool, verifier: SignedDataVerifier, settlement: SettlementService,
    catalog: CatalogRepository, clock: WallClock, logger: Logger,
    deferredWakes: DeferredWakeSchedule = DeferredWakeSchedule()
  ) {
    self.database = database
    self.verifier = verifier
    self.settlement = settlement
    self.catalog = catalog
    self.clock = clock
    self.logger = logger
    self.deferredWakes = deferredWakes
  }

  /// Verifies and stores; returns false for a duplicate. Throws `NotificationRefusal` for a
  /// notification that does not verify, and stores nothing.
  package func receive(signedPayload: String) async throws -> Bool {
    let verified: VerifiedNotification
    let verification = verifier.verifyNotification(signedPayload)
    switch verification {
    case .valid(let value): verified = value
    case .invalid, .retryable, .misconfigured:
      let reason = verification.reason ?? "not verified"
      logger.warning("notification refused", ["reason": .string(reason)])
      throw NotificationRefusal(reason: reason)
    }
    let body = verified.payload
    let uuid = body.notificationUUID
    let type = body.notificationType
    guard !uuid.isEmpty, uuid.count <= 64, !type.isEmpty, type.count <= 64 else {
      throw NotificationRefusal(reason: "notificationUUID and notificationType are required")
    }
    let state: NotificationState = body.notificationTypeValue == nil ? .unhandled : .pending
    let stored = try JSONCoding.text(StoredNotification(verified))
    var query: PostgresQuery = """
      INSERT INTO apple_notifications (notification_uuid, notification_type, subtype, environment,
        signed_date, transaction_id, original_transaction_id, payload, state, result)
      VALUES (\(uuid), \(type), \(body.subtype), \(body.data?.environment ?? body.appData?.environment),
      """
    query.append(TransactionRecord.time(body.signedDate))
    query.append(
      """
      , \(verified.transaction?.transactionId), \(verified.transaction?.originalTransactionId ?? verified.renewalInfo?.originalTransactionId),
        \(stored)::jsonb, \(state), \(state == .unhandled ? NotificationResult.unknownType : nil))
      ON CONFLICT (notification_uuid) DO NOTHING RETURNING 1 AS inserted
      """)
    let inserted = try await !database.query(query).isEmpty
    let fields: [String: LogValue] = [
      "notification_uuid": .string(uuid), "type": .string(type),
      "subtype": .string(body.subtype ?? ""),
    ]
    if !inserted {
      logger.info("duplicate notification ignored", fields)
    } else if state == .unhandled {
      logger.warning("notification of an unknown type stored as unhandled", fields)
    } else {
      logger.info("notification stored", fields)
    }
    return inserted
  }

  /// Applies every pending notification, and every deferred one whose transaction has an
  /// owner by now; safe with many instances (SKIP LOCKED).
  package func processPending() async {
    do {
      try await database.execute(
        DeferredNotifications.wakeReady(all: deferredWakes.takeFullPass()))
      // Those that lost a conflict wait for the next pass: retried at once, they could spin
      // against the transaction they conflict with.
      var nextPass: [String] = []
      loop: while true {
        switch try await processOne(skipping: nextPass) {
        case .none: break loop
        case .done: continue
        case .nextPass(let uuid): nextPass.append(uuid)
        }
      }
    } catch {
      logger.warning("notification processing failed", ["error": .string("\(error)")])
    }
  }

  /// The attempts a notification may have in all while each new one ends in a conflict with
  /// another transaction (`PostgresError.isTransientConflict`, or a foreign key refused for a
  /// row deleted under it, `isForeignKeyViolation`), one a pass, before it is kept
  /// as failed: conflicts pass, so one that lasts this long is a fault for admins to see.
  static let conflictAttempts = 10

  /// What one step of a pass came to.
  private enum Step {
    /// Nothing is pending (but those left for the next pass).
    case none
    /// One was applied, or kept as failed.
    case done
    /// One lost a conflict and stays pending for the next pass.
    case nextPass(String)
  }

  private struct Failure: Error {
    var uuid: String
    var underlying: any Error
  }

  /// Applies the oldest pending notification not in `skipping`.
  private func processOne(skipping: [String]) async throws -> Step {
    let processed: (String, NotificationOutcome)?
    let skipped = try JSONCoding.text(skipping)
    do {
      processed = try await database.withTransaction { tx in
        guard
          let row = try await tx.query(
            """
            SELECT notification_uuid, payload::text AS payload FROM apple_notifications
            WHERE state = \(NotificationState.pending)
              AND NOT \(skipped)::jsonb ? notification_uuid
            ORDER BY seq LIMIT 1 FOR UPDATE SKIP LOCKED
            """
          ).first
        else { return nil }
        let uuid: String = try row.decode("notification_uuid")
        do {
          let stored = try JSONCoding.decode(
            StoredNotification.self, fromText: try row.decode("payload"))
          let effects = NotificationEffects(
            settlement: settlement, catalog: catalog, clock: clock, tx: tx, uuid: uuid)
          let outcome = try await effects.apply(stored)
          try await tx.execute(
            """
            UPDATE apple_notifications SET state = \(outcome.state), result = \(outcome.result),
              attempts = attempts + 1,
              processed_at = CASE WHEN \(outcome.state == .processed)::boolean THEN now() END,
              deferred_at = CASE WHEN \(outcome.state == .deferred)::boolean THEN now()
                                 ELSE deferred_at END
            WHERE notification_uuid = \(uuid)
            """)
          return (uuid, outcome)
        } catch let error as PostgresError where error.isUnavailable {
          throw error
        } catch {
          throw Failure(uuid: uuid, underlying: error)
        }
      }
    } catch let failure as Failure {
      let refused = failure.underlying as? PostgresError
      // A foreign key refusal is most likely a row deleted under it (a product, an endpoint):
      // retried like a lost conflict, and kept as failed only if it lasts.
      if refused?.isTransientConflict == true || refused?.isForeignKeyViolation == true
        || failure.underlying is NotificationLostRace
      {
        if try await retryLater(failure.uuid, failure.underlying, capped: true) {
          return .nextPass(failure.uuid)
        }
      } else if refused?.isTransient == true {
        // Refused for a state of the server that passes (a lock or statement timeout, a full
        // disk, a node a failover made read-only). Kept as failed it would never be applied:
        // Apple's redelivery and the history's are duplicates of it by then. So it stays
        // pending for as many passes as it takes, as while the database is unreachable.
        _ = try await retryLater(failure.uuid, failure.underlying, capped: false)
        return .nextPass(failure.uuid)
      }
      // Kept for admins instead of retried forever; the transaction above rolled back.
      try await database.execute(
        """
        UPDATE apple_notifications SET state = \(NotificationState.failed), attempts = attempts + 1,
          result = \("error: \(failure.underlying)")
        WHERE notification_uuid = \(failure.uuid)
        """)
      logger.error(
        "notification could not be applied",
        ["notification_uuid": .string(failure.uuid), "error": .string("\(failure.underlying)")])
      return .done
    }
    guard let (uuid, outcome) = processed else { return .none }
    logger.notice(
      "notification applied",
      [
        "notification_uuid": .string(uuid), "state": .string(outcome.state.rawValue),
        "result": .string(outcome.result.rawValue),
      ])
    return .done
  }

  /// Counts an attempt that failed for a passing reason and leaves the notification pending
  /// for the next pass; one that lost a conflict (`capped`) only until it has had its
  /// `conflictAttempts`: false then, and the caller keeps it as failed. Its transaction rolled
  /// back, so applying it again starts from what is committed.
  private func retryLater(_ uuid: String, _ error: any Error, capped: Bool) async throws -> Bool {
    let (result, message) =
      capped
      ? (
        "conflict, retried: \(error)",
        "notification lost a conflict; applied again on the next pass"
      )
      : (
        "database refused, retried: \(error)",
        "notification refused by the database for a passing reason; applied again on the next pass"
      )
    let left = try await database.query(
      """
      UPDATE apple_notifications SET attempts = attempts + 1, result = \(result)
      WHERE notification_uuid = \(uuid) AND state = \(NotificationState.pending)
        AND (NOT \(capped)::boolean OR attempts + 1 < \(Self.conflictAttempts))
      RETURNING attempts
      """)
    guard let row = left.first else { return false }
    logger.warning(
      message,
      [
        "notification_uuid": .string(uuid), "error": .string("\(error)"),
        "attempts": .int(Int(try row.decode("attempts", as: Int32.self))),
      ])
    return true
  }
}
