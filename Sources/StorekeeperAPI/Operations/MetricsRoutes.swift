import AppStore
import HTTP
import StorekeeperCore

/// `GET /metrics` in Prometheus text format: this instance's requests, its pools and Apple
/// settings (from memory), and the state of orders and work queues read from PostgreSQL
/// (`StoredStateMetrics`: small reads; the counts over tables that grow from `MetricsSnapshot`,
/// recomputed in the background, never by a scrape). It needs a credential
/// on every listener: an admin token (read scope suffices) or `METRICS_TOKEN`, under the admin
/// failure limit; order counts and backlogs are not for anyone on the internet, and the
/// separate admin listener may be reachable from more of the network than meant.
package struct MetricsRoutes: Sendable {
  let auth: AdminAuthenticator
  let snapshot: MetricsSnapshot
  let stored: StoredStateMetrics
  let catalog: ServedCatalog
  let requests: RequestMetrics
  let appleSettings: AppleConfigurationMonitor
  let pools: DatabasePools
  /// This instance's webhook attempts, when delivery runs in this process.
  var webhooks: WebhookMetrics? = nil
  /// Apple calls for receipts, when they are judged through the App Store Server API.
  var receiptCalls: ServerAPIReceiptMetrics? = nil
  /// This instance's verification lanes and queue.
  var verification: VerificationGate? = nil
  /// Google Play's service account and acknowledgement backlog, when it is on.
  var google: GooglePlayHealth? = nil
  /// This instance's group commit of orders.
  var orderBatches: OrderGroupCommit? = nil
  /// The app sign-in service's key set, when `APP_JWT_JWKS_URL` is set.
  var appJWKS: AppJWKSHealth? = nil

  package init(
    auth: AdminAuthenticator, snapshot: MetricsSnapshot, stored: StoredStateMetrics,
    catalog: ServedCatalog, requests: RequestMetrics, appleSettings: AppleConfigurationMonitor,
    pools: DatabasePools, webhooks: WebhookMetrics? = nil,
    receiptCalls: ServerAPIReceiptMetrics? = nil, verification: VerificationGate? = nil,
    google: GooglePlayHealth? = nil, orderBatches: OrderGroupCommit? = nil,
    appJWKS: AppJWKSHealth? = nil
  ) {
    self.appJWKS = appJWKS
    self.google = google
    self.orderBatches = orderBatches
    self.auth = auth
    self.snapshot = snapshot
    self.stored = stored
    self.catalog = catalog
    self.requests = requests
    self.appleSettings = appleSettings
    self.pools = pools
    self.webhooks = webhooks
    self.receiptCalls = receiptCalls
    self.verification = verification
  }

  package func register(_ router: inout APIRouter) {
    router.add(.get, "/metrics") { request, context in
      try auth.authenticateMetrics(request, context)
      var lines = requests.render()
      lines += [
        "# HELP storekeeper_catalog_products Active products served from memory.",
        "# TYPE storekeeper_catalog_products gauge",
        "storekeeper_catalog_products \(catalog.snapshot.byId.count)",
      ]
      // What PostgreSQL must answer is left out while it cannot (the primary down), never the
      // whole scrape: the counters held in memory (5xx answers, queue timeouts, sessions) are
      // what an operator watches then, and `refreshes_total` going flat is the stale alert.
      var unread = 0
      lines += await snapshot.lines(unread: &unread)
      do {
        lines += try await stored.lines()
      } catch {
        unread += 1
        // A scraper that left cancelled the count: nothing to warn of.
        if !Task.isCancelled {
          context.logger.warning(
            "metrics source unread for a scrape",
            ["source": .string("StoredStateMetrics"), "error": .string("\(error)")])
        }
      }
      lines += [
        "# HELP storekeeper_metrics_unread_sources Sources of database gauges this scrape left "
          + "out because PostgreSQL did not answer (0: every gauge is here).",
        "# TYPE storekeeper_metrics_unread_sources gauge",
        "storekeeper_metrics_unread_sources \(unread)",
      ]
      lines += appleSettingsLines()
      lines += await appJWKS?.lines() ?? []
      lines += webhooks?.attemptLines() ?? []
      lines += receiptCalls?.lines ?? []
      lines += verification?.lines ?? []
      if let google { lines += await google.lines(nowMs: google.clock.milliseconds) }
      if let orderBatches {
        // Keyed batches take their slots in one order and retry after they commit, so none
        // should ever deadlock (docs/decisions/0006): a rising count is a regression.
        lines += [
          "# HELP storekeeper_order_batch_deadlocks_total Order batches PostgreSQL broke out of "
            + "a deadlock since start (each written again one order at a time).",
          "# TYPE storekeeper_order_batch_deadlocks_total counter",
          "storekeeper_order_batch_deadlocks_total \(orderBatches.deadlocksBroken)",
          "# HELP storekeeper_order_queue_timeouts_total Order requests answered 503 since start "
            + "after waiting ORDER_QUEUE_TIMEOUT for a batch to take them (never written).",
          "# TYPE storekeeper_order_queue_timeouts_total counter",
          "storekeeper_order_queue_timeouts_total \(orderBatches.queueTimeoutsAnswered)",
        ]
      }
      lines += await DatabaseMetrics(pools: pools).lines()
      return Response(
        status: 200, headers: HTTPHeaders([("Content-Type", "text/plain; version=0.0.4")]),
        body: Array((lines.joined(separator: "\n") + "\n").utf8))
    }
  }

  /// This instance's own Apple settings as verifyReceipt judged them: a gauge that is 1 while
  /// a problem stands (an alert's series) and a counter of such answers since start.
  private func appleSettingsLines() -> [String] {
    func labels(_ wrong: Misconfiguration) -> String {
      "{setting=\"\(wrong.setting.variable)\",status=\"\(wrong.status)\","
        + "environment=\"\(wrong.environment)\"}"
    }
    var lines = [
      "# HELP storekeeper_apple_configuration_errors 1 while verifyReceipt blames this instance's "
        + "setting (receipts wait as pending until it is fixed).",
      "# TYPE storekeeper_apple_configuration_errors gauge",
    ]
    lines += appleSettings.current.map {
      "storekeeper_apple_configuration_errors\(labels($0.misconfiguration)) 1"
    }
    lines += [
      "# HELP storekeeper_apple_configuration_errors_total verifyReceipt answers since start that "
        + "blamed this instance's settings.",
      "# TYPE storekeeper_apple_configuration_errors_total counter",
    ]
    lines += appleSettings.totals.map {
      "storekeeper_apple_configuration_errors_total\(labels($0.misconfiguration)) \($0.count)"
    }
    return lines
  }
}
