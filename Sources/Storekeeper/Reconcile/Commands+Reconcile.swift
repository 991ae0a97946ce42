import AppStore
import Foundation
import Postgres
import StorekeeperCore

extension Commands {
  static let reconcileUsage =
    "usage: storekeeper reconcile [--dry-run] [--limit N]  (configuration from the environment)"

  /// `storekeeper reconcile`: one pass over every subscriber (at most `--limit`), whatever was
  /// checked lately, sharing the leases of the background pass. Prints the repairs and a
  /// summary. Exit 0 when the pass ran through (subscriptions Apple would not answer for are
  /// counted as errors), 1 when it stopped because Apple or the database could not be reached
  /// or refused the key, 2 for a usage or configuration error.
  public static func reconcile(_ arguments: [String]) async -> Int32 {
    var dryRun = false
    var limit: Int?
    var rest = arguments[...]
    while let argument = rest.popFirst() {
      switch argument {
      case "--dry-run": dryRun = true
      case "--limit":
        guard let text = rest.popFirst(), let value = Int(text), value > 0 else {
          FileHandle.standardError.write(Data("--limit needs a positive number\n".utf8))
          return 2
        }
        limit = value
      default:
        FileHandle.standardError.write(Data((reconcileUsage + "\n").utf8))
        return 2
      }
    }
    guard let config = config() else { return 2 }
    let logger = logger(config.logLevel)
    let database = commandPool(
      url: config.databaseURL, logger: logger.with("component", "postgres"), maxConnections: 2)
    // The repairs' events are computed at PostgreSQL's time, as a serving instance's are (read
    // once the configuration is known to be whole).
    let time = DatabaseTime(logger: logger.with("component", "time"))
    let reconciler: SubscriptionReconciler
    do {
      let clock = time.clock
      let orders = OrderRepository(database: database, outbox: EventOutbox(clock: clock))
      let reports = ReportStore(
        database: database, leaseMs: max(60_000, 3 * config.appleTimeoutMs),
        policy: RetryPolicy(baseMs: config.retryBaseMs, windowMs: config.retryWindowMs),
        clock: clock, retentionMs: config.proofRetentionMs)
      // Deferred notifications a renewal wakes are applied by a serving instance's worker.
      var settlement = SettlementService(database: database, orders: orders, reports: reports) {}
      settlement.sandboxCredits = config.sandboxCredits
      settlement.refundPolicy = config.refundPolicy
      let appStore = try Application.appStoreConfiguration(config, logger: logger)
      guard
        let made = try Application.reconciler(
          config, database: database, verifier: try SignedDataVerifier(configuration: appStore),
          settlement: settlement, catalog: CatalogRepository(database: database), clock: clock,
          appleSettings: nil, logger: logger.with("component", "reconcile"))
      else {
        FileHandle.standardError.write(
          Data(
            "configuration error: reconcile needs APPLE_API_KEY_FILE, APPLE_API_KEY_ID and APPLE_API_ISSUER_ID\n"
              .utf8))
        await database.shutdown()
        return 2
      }
      reconciler = made
    } catch {
      FileHandle.standardError.write(Data("\(error)\n".utf8))
      await database.shutdown()
      return 2
    }
    do { try await time.read(database) } catch {
      FileHandle.standardError.write(
        Data("reconcile failed: PostgreSQL's clock could not be read: \(failure(error))\n".utf8))
      await database.shutdown()
      return 1
    }
    let summary = await reconciler.run(
      trigger: .command, dryRun: dryRun, limit: limit, dueOnly: false)
    for repair in summary.repairs {
      let was = (try? JSONCoding.text(repair.repair.was)) ?? "?"
      let became = (try? JSONCoding.text(repair.repair.became)) ?? "?"
      print(
        "\(dryRun ? "would repair" : "repaired") \(repair.repair.kind) user=\(repair.userId) "
          + "original_transaction_id=\(repair.originalTransactionId) was=\(was) became=\(became)")
    }
    print(summary.line + (summary.runId.map { " (run \($0))" } ?? ""))
    await database.shutdown()
    return summary.failure == nil ? 0 : 1
  }
}
