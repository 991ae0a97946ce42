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
      queue: domain.webhookQueue, transport: OutboundWebhookTransport(), clock: domain.clock,
      attempts: domain.webhookAttempts, logger: logger.with("component", "webhooks"),
      wake: { webhooksPending.wake() })
    let (notifications, snapshot) = (domain.notifications, edge.metricsSnapshot)
    let (time, database) = (domain.time, domain.database)
    let chartRollup = ChartRollupPass(
      rollup: ChartRollup(
        database: domain.database, countsZone: config.chartsTimeZone,
        logger: logger.with("component", "chart-rollup")),
      intervalMs: config.chartsRollupIntervalMs,
      logger: logger.with("component", "chart-rollup"))
    var services: [any Service] = [
      // Start-up read PostgreSQL's clock; this reads it again, so the monotonic clock counting
      // from it never drifts far, and a changed offset is logged.
      BackgroundLoop(
        name: "database-time", intervalMs: DatabaseTime.refreshIntervalMs, logger: logger
      ) { await time.refresh(database) },
      BackgroundLoop(name: "order-sweeper", intervalMs: config.sweepIntervalMs, logger: logger) {
        await sweeper.runOnce()
      },
      BackgroundLoop(
        name: "report-retry", intervalMs: min(config.retryBaseMs, 5000),
        signal: domain.reportsDue, logger: logger
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
      ExposureService(
        recorder: domain.exposures, signal: domain.exposuresPending,
        logger: logger.with("component", "exposures")),
      BackgroundLoop(
        name: "chart-rollup", intervalMs: config.chartsRollupIntervalMs, logger: logger
      ) { await chartRollup.runOnce() },
    ]
    if let google = domain.google {
      let acknowledger = GoogleAcknowledger(
        queue: google.acknowledgements, client: google.client, monitor: google.monitor,
        logger: logger.with("component", "google-acknowledge"))
      services.append(
        BackgroundLoop(
          name: "google-acknowledge", intervalMs: min(config.retryBaseMs, 5000),
          signal: domain.acknowledgementsPending, logger: logger
        ) { await acknowledger.runOnce() })
      let prices = google.prices
      services.append(
        BackgroundLoop(
          name: "google-prices", intervalMs: min(config.retryBaseMs, 5000), logger: logger
        ) { await prices.runOnce() })
      let notifications = google.notifications
      services.append(
        BackgroundLoop(
          name: "google-notifications", intervalMs: min(config.retryBaseMs, 5000),
          signal: domain.googleNotificationsPending, logger: logger
        ) { await notifications.processPending() })
      let sweeps = google.sweeps
      services.append(
        BackgroundLoop(
          name: "google-sweeps", intervalMs: min(google.sweepIntervalMs, 60_000), logger: logger
        ) { await sweeps.runOnce() })
    }
    for (environment, client) in try notificationHistoryClients(config) {
      let pending = domain.notificationsPending
      let recovery = NotificationRecovery(
        database: domain.database, client: client, environment: environment,
        notifications: notifications,
        logger: logger.with("component", "notification-recovery"), wake: { pending.wake() })
      services.append(
        BackgroundLoop(
          name: environment == .production
            ? "notification-recovery" : "notification-recovery-sandbox",
          intervalMs: config.notificationRecoveryIntervalMs, logger: logger
        ) { await recovery.runOnce() })
    }
    if let sender = try accountTokenSender(config, domain: domain, logger: logger) {
      services.append(
        BackgroundLoop(
          name: "app-account-tokens", intervalMs: min(config.retryBaseMs, 5000), logger: logger
        ) { await sender.runOnce() })
    }
    if let client = try consumptionClient(config) {
      let answerer = ConsumptionAnswerer(
        answers: ConsumptionAnswers(database: domain.database, outbox: domain.orders.outbox),
        client: client, policy: config.consumption,
        retryBaseSeconds: Int(config.consumptionRetryBaseMs / 1000),
        logger: logger.with("component", "consumption"))
      services.append(
        BackgroundLoop(
          name: "consumption-answers", intervalMs: min(config.consumptionRetryBaseMs, 5000),
          logger: logger
        ) { await answerer.runOnce() })
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
