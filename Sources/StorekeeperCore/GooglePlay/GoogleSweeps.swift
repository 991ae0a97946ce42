import GooglePlay
import Postgres
import StorekeeperLogging

/// The Google Play sweeps, for what notifications missed: every `intervalMs`, one instance
/// (a lease per sweep in `google_sweeps`) reads `voidedpurchases.list` from where the last pass
/// ended (overlapping an hour, at most 29 days back) and takes back each credited purchase it
/// lists (one not credited is kept once, and taken back if a report credits it later), and
/// another checks the subscriptions least recently reconciled against `subscriptionsv2.get`,
/// with the same effects as a subscription notification.
package struct GoogleSweeps: Sendable {
  let notifications: GoogleNotificationService
  let intervalMs: Int64
  /// Most subscriptions one pass checks (the quota is 3,000 queries a minute per bucket).
  let maxSubscriptionsPerPass: Int
  let logger: Logger

  package init(
    notifications: GoogleNotificationService, intervalMs: Int64,
    maxSubscriptionsPerPass: Int = 500, logger: Logger
  ) {
    self.notifications = notifications
    self.intervalMs = intervalMs
    self.maxSubscriptionsPerPass = maxSubscriptionsPerPass
    self.logger = logger
  }

  static let leaseSeconds = 600
  static let overlapMs: Int64 = 3_600_000
  static let lookbackMs: Int64 = 29 * 86_400_000
  /// Subscriptions whose access ended longer ago than this are not checked again.
  static let recentMs: Int64 = 60 * 86_400_000

  var database: PostgresPool { notifications.database }

  package func runOnce() async {
    await voidedPass()
    await subscriptionPass()
  }

  /// Takes the sweep's lease if no instance holds it and its last pass is an interval old;
  /// returns where the last pass ended and the database's now, in epoch milliseconds.
  private func lease(_ name: String) async throws -> (checkedUntilMs: Int64?, nowMs: Int64)? {
    guard
      let row = try await database.query(
        """
        UPDATE google_sweeps SET lease_until = now() + \(Self.leaseSeconds) * interval '1 second'
        WHERE name = \(name) AND lease_until < now()
          AND (last_run_at IS NULL
               OR last_run_at <= now() - \(intervalMs)::bigint * interval '1 millisecond')
        RETURNING (extract(epoch FROM checked_until) * 1000)::bigint AS checked_ms,
          (extract(epoch FROM now()) * 1000)::bigint AS now_ms
        """
      ).first
    else { return nil }
    return (try row.decodeIfPresent("checked_ms"), try row.decode("now_ms"))
  }

  private func release(_ name: String, checkedUntilMs: Int64?, error: String?) async {
    var query: PostgresQuery = """
      UPDATE google_sweeps SET lease_until = '-infinity', last_run_at = now(),
        last_error = \(error), checked_until =
      """
    query.append(
      checkedUntilMs.map { TransactionRecord.time($0) } ?? "checked_until")
    query.append(" WHERE name = \(name)")
    do { try await database.execute(query) } catch {
      logger.warning("Google sweep lease not released", ["error": .string("\(error)")])
    }
  }

  func voidedPass() async {
    do {
      guard let lease = try await lease("voided") else { return }
      let start = max(
        lease.nowMs - Self.lookbackMs, (lease.checkedUntilMs ?? 0) - Self.overlapMs)
      let voided: [VoidedPurchase]
      do {
        voided = try await notifications.client.allVoidedPurchases(
          startTimeMillis: start, maxPages: 100)
      } catch {
        await release("voided", checkedUntilMs: nil, error: GooglePurchaseVerifier.describe(error))
        logger.warning(
          "voided purchases sweep could not read Google",
          ["error": .string(GooglePurchaseVerifier.describe(error))])
        return
      }
      var reversed = 0
      var unmatched = 0
      // Each entry once (`google_voids`), oldest first, so a partial refund comes before the
      // full refund of what it left.
      do {
        for entry in voided.sorted(by: {
          ($0.voidedTimeMillis ?? 0) < ($1.voidedTimeMillis ?? 0)
        }) {
          guard let token = entry.purchaseToken, !token.isEmpty else { continue }
          guard let purchase = try await notifications.known(token) else {
            if try await recordUnmatched(entry, token: token) { unmatched += 1 }
            continue
          }
          switch try await notifications.applyVoid(entry, token: token, purchase) {
          case "refunded", "partial_refund": reversed += 1
          default: break
          }
        }
        reversed += try await applyMatchedLater()
      } catch let failure as GooglePlayFailure {
        // A void that must wait for Google: the pass ends where it was, and the next one reads
        // the list again from the same point (entries applied are not applied twice).
        let reason = GooglePurchaseVerifier.describe(failure)
        await release("voided", checkedUntilMs: nil, error: reason)
        logger.warning(
          "voided purchases sweep stopped: Google did not answer", ["error": .string(reason)])
        return
      }
      await release("voided", checkedUntilMs: lease.nowMs, error: nil)
      // A pass that changed nothing is routine: not worth a notice every interval.
      let fields: [String: LogValue] = [
        "listed": .int(voided.count), "reversed": .int(reversed), "unmatched": .int(unmatched),
      ]
      if reversed + unmatched > 0 {
        logger.notice("voided purchases swept", fields)
      } else {
        logger.info("voided purchases swept", fields)
      }
    } catch {
      logger.warning("voided purchases sweep failed", ["error": .string("\(error)")])
    }
  }

  func subscriptionPass() async {
    do {
      guard try await lease("subscriptions") != nil else { return }
      let tokens: [String] = try await database.query(
        """
        SELECT purchase_token FROM google_purchases
        WHERE kind = \(GooglePurchase.Kind.subscription) AND revoked_at IS NULL
          AND trade_no IS NOT NULL
          AND (expiry_time IS NULL
               OR expiry_time > now() - \(Self.recentMs)::bigint * interval '1 millisecond')
        ORDER BY reconciled_at NULLS FIRST LIMIT \(maxSubscriptionsPerPass)
        """
      ).map { try $0.decode("purchase_token") }
      var changed = 0
      var failed = 0
      for token in tokens {
        guard let purchase = try await notifications.known(token) else { continue }
        switch try await notifications.subscriptionChanged(token, purchase) {
        case .done(.processed, let result) where result != "active": changed += 1
        case .retry: failed += 1
        default: break
        }
        try await database.execute(
          "UPDATE google_purchases SET reconciled_at = now() WHERE purchase_token = \(token)")
      }
      await release(
        "subscriptions", checkedUntilMs: nil, error: failed > 0 ? "\(failed) failed" : nil)
      let fields: [String: LogValue] = [
        "checked": .int(tokens.count), "changed": .int(changed), "failed": .int(failed),
      ]
      if changed + failed > 0 {
        logger.notice("Google subscriptions reconciled", fields)
      } else {
        logger.info("Google subscriptions reconciled", fields)
      }
    } catch {
      logger.warning("Google subscription reconciliation failed", ["error": .string("\(error)")])
    }
  }
}
