import AppStore
import Postgres
import StorekeeperCore
import StorekeeperLogging

/// Reads the notifications Apple could not deliver from the App Store Server API's notification
/// history and stores them as if delivered (verified, deduplicated on `notificationUUID`), so a
/// notification is not lost when Apple stops re-sending it (five retries over about six and a
/// half days). Instances take turns through a lease in `notification_recovery`; each pass
/// reads from a little before where the last complete pass ended up to now.
package struct NotificationRecovery: Sendable {
  let database: PostgresPool
  let client: NotificationHistoryClient
  let notifications: NotificationService
  let logger: Logger
  /// Wakes the notification worker once something new is stored.
  let wake: @Sendable () -> Void

  package init(
    database: PostgresPool, client: NotificationHistoryClient, notifications: NotificationService,
    logger: Logger, wake: @escaping @Sendable () -> Void
  ) {
    self.database = database
    self.client = client
    self.notifications = notifications
    self.logger = logger
    self.wake = wake
  }

  /// The first pass looks back a week: longer than Apple's retries last.
  static let firstLookbackMs: Int64 = 7 * 86_400_000
  /// Apple answers for the last 180 days only.
  static let oldestMs: Int64 = 179 * 86_400_000
  /// Each pass starts this much before the last one ended (clocks differ).
  static let overlapMs: Int64 = 10 * 60_000
  static let leaseSeconds = 600
  static let maxPages = 100

  package func runOnce() async {
    let lease: (checkedUntil: Int64?, now: Int64)
    do {
      guard
        let row = try await database.query(
          """
          UPDATE notification_recovery
          SET lease_until = now() + \(Self.leaseSeconds) * interval '1 second', updated_at = now()
          WHERE id = 1 AND lease_until < now()
          RETURNING (extract(epoch FROM checked_until) * 1000)::bigint AS checked_until,
                    (extract(epoch FROM now()) * 1000)::bigint AS now
          """
        ).first
      else { return }  // another instance is reading
      lease = (try row.decodeIfPresent("checked_until"), try row.decode("now"))
    } catch {
      logger.warning("notification recovery could not start", ["error": .string("\(error)")])
      return
    }
    let start = max(
      lease.now - Self.oldestMs,
      (lease.checkedUntil ?? lease.now - Self.firstLookbackMs) - Self.overlapMs)
    let (stored, seen, failure) = await read(from: start, to: lease.now)
    do {
      try await database.execute(
        """
        UPDATE notification_recovery
        SET lease_until = '-infinity', updated_at = now(), last_error = \(failure),
            checked_until = CASE WHEN \(failure)::text IS NULL
                                 THEN to_timestamp(\(lease.now)::bigint / 1000.0)
                                 ELSE checked_until END
        WHERE id = 1
        """)
    } catch {
      logger.warning(
        "notification recovery could not record its pass", ["error": .string("\(error)")])
    }
    if stored > 0 { wake() }
    let fields: [String: LogValue] = [
      "undelivered": .int(seen), "stored": .int(stored), "from_ms": .int(Int(start)),
      "to_ms": .int(Int(lease.now)),
    ]
    if let failure {
      logger.warning(
        "notification recovery incomplete; the next pass reads the range again",
        fields.merging(["error": .string(failure)]) { $1 })
    } else if stored > 0 {
      logger.notice("undelivered notifications recovered", fields)
    } else {
      logger.info("notification recovery found nothing new", fields)
    }
  }

  /// Stores what the history holds in the range; the count stored, the count seen, and why it
  /// stopped early, if it did.
  private func read(from start: Int64, to end: Int64) async -> (Int, Int, String?) {
    var stored = 0
    var seen = 0
    var token: String?
    for _ in 0..<Self.maxPages {
      let page: NotificationHistoryPage
      switch await client.page(
        startMs: start, endMs: end, onlyFailures: true, paginationToken: token)
      {
      case .success(let value): page = value
      case .failure(.retryable(let why)), .failure(.refused(let why)): return (stored, seen, why)
      }
      for item in page.notificationHistory {
        seen += 1
        do {
          if try await notifications.receive(signedPayload: item.signedPayload) { stored += 1 }
        } catch let refused as NotificationRefusal {
          // Not ours or not genuine: the same refusal a delivery would have had.
          logger.warning("recovered notification refused", ["detail": .string(refused.detail)])
        } catch {
          return (stored, seen, "storing a recovered notification failed: \(error)")
        }
      }
      guard page.hasMore, let next = page.paginationToken else { return (stored, seen, nil) }
      token = next
    }
    return (stored, seen, "more than \(Self.maxPages) pages in one pass")
  }
}
