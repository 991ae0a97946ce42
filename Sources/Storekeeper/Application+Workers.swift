import StorekeeperCore
import StorekeeperLogging
import StorekeeperWorkers

extension Application {
  /// The background workers (StorekeeperWorkers), built last from the domain and the API:
  /// started after the listeners, stopped after them, as a list.
  static func services(config: AppConfig, domain: Domain, edge: Edge, logger: Logger) throws
    -> [any Service]
  {
    let sweeper = OrderSweeper(
      database: domain.database, orders: domain.orders, idempotency: domain.idempotency,
      reports: domain.reports, clock: domain.clock, logger: logger)
    let retryWorker = ReportRetryWorker(
      reports: domain.reports, orders: domain.orders, processor: domain.processor,
      receipts: domain.receipts, logger: logger.with("component", "report-retry"))
    let webhooksPending = domain.webhooksPending
    // Sends webhooks; drained on shutdown so attempts in flight are recorded.
    let dispatcher = WebhookDispatcher(
      queue: domain.webhookQueue, transport: URLSessionWebhookTransport(), clock: domain.clock,
      attempts: domain.webhookAttempts, logger: logger.with("component", "webhooks"),
      wake: { webhooksPending.wake() })
    let (notifications, snapshot) = (domain.notifications, edge.metricsSnapshot)
    let chartRollup = ChartRollupPass(
      rollup: ChartRollup(database: domain.database), intervalMs: config.chartsRollupIntervalMs,
      logger: logger.with("component", "chart-rollup"))
    var services: [any Service] = [
      BackgroundLoop(name: "order-sweeper", intervalMs: config.sweepIntervalMs, logger: logger) {
        await sweeper.runOnce()
      },
      BackgroundLoop(
        name: "report-retry", intervalMs: min(config.retryBaseMs, 5000), logger: logger
      ) { await retryWorker.runOnce() },
      BackgroundLoop(
        name: "notifications", intervalMs: 5000, signal: domain.notificationsPending,
        logger: logger
      ) { await notifications.processPending() },
      WebhookService(
        loop: BackgroundLoop(
          name: "webhooks", intervalMs: config.webhooks.pollIntervalMs,
          signal: domain.webhooksPending, logger: logger
        ) { await dispatcher.runOnce() },
        dispatcher: dispatcher),
      BackgroundLoop(
        name: "metrics", intervalMs: config.metricsRefreshIntervalMs, logger: logger
      ) { await snapshot.refresh() },
      BackgroundLoop(
        name: "chart-rollup", intervalMs: config.chartsRollupIntervalMs, logger: logger
      ) { await chartRollup.runOnce() },
    ]
    if let client = try notificationHistoryClient(config) {
      let pending = domain.notificationsPending
      let recovery = NotificationRecovery(
        database: domain.database, client: client, notifications: notifications,
        logger: logger.with("component", "notification-recovery"), wake: { pending.wake() })
      services.append(
        BackgroundLoop(
          name: "notification-recovery", intervalMs: config.notificationRecoveryIntervalMs,
          logger: logger
        ) { await recovery.runOnce() })
    }
    if let intervalMs = config.reconcile.intervalMs,
      let reconciler = try reconciler(
        config, database: domain.database, verifier: domain.verifier.signed,
        settlement: domain.settlement, catalog: domain.catalog, clock: domain.clock,
        appleSettings: domain.appleSettings, logger: logger.with("component", "reconcile"))
    {
      let schedule = ReconcileSchedule(
        reconciler: reconciler, intervalMs: intervalMs, clock: domain.clock)
      services.append(
        BackgroundLoop(name: "reconcile", intervalMs: schedule.tickMs, logger: logger) {
          await schedule.runOnce()
        })
    }
    return services
  }
}
