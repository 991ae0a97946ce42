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
      let closed = try await orders.closeExpired(now: clock.now())
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
}
