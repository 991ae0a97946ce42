import GooglePlay
import StorekeeperLogging

/// Works the acknowledgement queue: consumes or acknowledges each credited purchase at Google,
/// retrying with backoff until Google takes it. Instances share the queue
/// (`GoogleAcknowledgementQueue.claimDue`), so each job is asked by one of them at a time.
package struct GoogleAcknowledger: Sendable {
  let queue: GoogleAcknowledgementQueue
  let client: GooglePlayClient
  let monitor: GooglePlayMonitor
  let logger: Logger

  package init(
    queue: GoogleAcknowledgementQueue, client: GooglePlayClient, monitor: GooglePlayMonitor,
    logger: Logger
  ) {
    self.queue = queue
    self.client = client
    self.monitor = monitor
    self.logger = logger
  }

  package func runOnce() async {
    do {
      while true {
        let due = try await queue.claimDue(limit: 20)
        if due.isEmpty { return }
        await withTaskGroup(of: Void.self) { group in
          for job in due { group.addTask { await process(job) } }
        }
      }
    } catch {
      logger.warning("acknowledgement pass failed", ["error": .string("\(error)")])
    }
  }

  func process(_ job: GoogleAcknowledgementQueue.Job) async {
    let fields: [String: LogValue] = [
      "action": .string(job.action.rawValue), "product_id": .string(job.googleProductId),
      "attempt": .int(job.attempts),
    ]
    let failure = await send(job)
    do {
      guard let failure else {
        try await queue.finish(job.token)
        monitor.resolved()
        logger.notice("Google purchase acknowledged", fields)
        return
      }
      switch failure {
      case .badRequest:
        // Google refuses a second acknowledgement (a worker killed after Google took the
        // first, before it was written down): whether it is done is Google's to say.
        if await isDone(job) {
          try await queue.finish(job.token)
          logger.notice("Google purchase was already acknowledged", fields)
          return
        }
      case .unknownToken(let status, _):
        // Google no longer knows the token: nothing to acknowledge, ever.
        try await queue.finish(job.token, error: "unknown_token (\(status))")
        logger.warning("Google no longer knows the purchase to acknowledge", fields)
        return
      case .credentialsRefused(let status, let text):
        monitor.record(status.map { "Google answered \($0): \(text)" } ?? text)
      case .retryable, .unexpected: break
      }
      let reason = GooglePurchaseVerifier.describe(failure)
      let atMs = try await queue.retryLater(job.token, attempt: job.attempts, error: reason)
      logger.warning(
        "Google acknowledgement failed; retrying",
        fields.merging([
          "reason": .string(reason), "retry_at_ms": .int(Int(atMs)),
        ]) { $1 })
    } catch {
      logger.warning(
        "acknowledgement bookkeeping failed", fields.merging(["error": .string("\(error)")]) { $1 })
    }
  }

  private func send(_ job: GoogleAcknowledgementQueue.Job) async -> GooglePlayFailure? {
    do {
      switch job.action {
      case .acknowledge:
        try await client.acknowledgeProduct(
          productId: job.googleProductId, token: job.token, packageName: job.packageName)
      case .consume:
        try await client.consumeProduct(
          productId: job.googleProductId, token: job.token, packageName: job.packageName)
      case .acknowledgeSubscription:
        try await client.acknowledgeSubscription(
          subscriptionId: job.googleProductId, token: job.token, packageName: job.packageName)
      }
      return nil
    } catch {
      return error
    }
  }

  private func isDone(_ job: GoogleAcknowledgementQueue.Job) async -> Bool {
    switch job.action {
    case .acknowledge, .consume:
      guard
        let purchase = try? await client.productPurchase(
          productId: job.googleProductId, token: job.token, packageName: job.packageName)
      else { return false }
      return job.action == .consume ? purchase.isConsumed : purchase.isAcknowledged
    case .acknowledgeSubscription:
      guard
        let purchase = try? await client.subscriptionPurchase(
          token: job.token, packageName: job.packageName)
      else { return false }
      return purchase.isAcknowledged
    }
  }
}
