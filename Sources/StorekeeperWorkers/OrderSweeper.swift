import Postgres
import StorekeeperCore
import StorekeeperLogging

/// One sweep: closes expired orders, removes expired idempotency keys, writes the events of
/// entitlements that lapsed, purges stored proofs past their retention.
package struct OrderSweeper: Sendable {
  let database: PostgresPool
  let orders: OrderRepository
  let idempotency: IdempotencyStore
  let reports: ReportStore
  let clock: WallClock
  let logger: Logger
  /// Expired orders closed per statement. A sweep goes on while batches come back full, for
  /// up to `expiryBudget`: one batch per sweep expired 17 orders a second at the default
  /// interval, so a faster flow of abandoned orders grew a backlog that held their users'
  /// open-order slots.
  var expiryBatch = 500
  var expiryBudget: Duration = .seconds(10)

  package init(
    database: PostgresPool, orders: OrderRepository, idempotency: IdempotencyStore,
    reports: ReportStore, clock: WallClock, logger: Logger
  ) {
    self.database = database
    self.orders = orders
    self.idempotency = idempotency
    self.reports = reports
    self.clock = clock
    self.logger = logger
  }

  package func runOnce() async {
    do {
      let closed = try await closeExpired()
      if closed > 0 { logger.info("expired orders closed", ["count": .int(closed)]) }
      _ = try await idempotency.removeExpired()
      let lapsed = try await orders.outbox.sweepExpired(on: database)
      if lapsed > 0 { logger.info("entitlement expiry events written", ["count": .int(lapsed)]) }
      let purged = try await reports.purgeProofs()
      if purged > 0 { logger.info("stored proofs purged", ["count": .int(purged)]) }
    } catch {
      logger.warning("order sweep failed", ["error": .string("\(error)")])
    }
  }

  /// Closes expired orders a batch at a time until a batch comes back short or the budget is
  /// spent (the rest waits for the next sweep).
  func closeExpired() async throws -> Int {
    let started = ContinuousClock.now
    var closed = 0
    while true {
      let batch = try await orders.closeExpired(now: clock.now(), limit: expiryBatch)
      closed += batch
      if batch < expiryBatch || ContinuousClock.now - started >= expiryBudget
        || LoopStop.requested
      {
        return closed
      }
    }
  }
}
