import AppStore
import Foundation
import StorekeeperCore
import StorekeeperLogging

/// Answers Apple's consumption requests: each due job (`ConsumptionAnswers.claim`, shared by
/// every instance) is answered from the ledger with Send Consumption Information v2, within
/// the 12 hours Apple gives. A 5xx, 429, timeout or 401 is tried again with backoff (doubling
/// from `retryBaseSeconds`, at most 30 minutes) while the window lasts; a refusal ends the job
/// as `failed`; a user without consent gets nothing sent (`skipped`), as Apple refuses answers
/// without it. A request about a purchase not yet reported waits for it the same way.
package struct ConsumptionAnswerer: Sendable {
  let answers: ConsumptionAnswers
  let client: ConsumptionInformationClient
  let policy: ConsumptionPolicy
  let retryBaseSeconds: Int
  let logger: Logger

  package init(
    answers: ConsumptionAnswers, client: ConsumptionInformationClient, policy: ConsumptionPolicy,
    retryBaseSeconds: Int, logger: Logger
  ) {
    self.answers = answers
    self.client = client
    self.policy = policy
    self.retryBaseSeconds = max(1, retryBaseSeconds)
    self.logger = logger
  }

  static let maxRetrySeconds = 1800

  /// Jobs answered per pass, at most.
  static let maxPerPass = 20

  /// Claims and answers one job at a time, so each lease covers one call to Apple (a 429's
  /// waits included): claimed 20 at once, a slow Apple let the lease of the last ones run out
  /// while the first were answered, and another instance sent them too.
  package func runOnce() async {
    for _ in 0..<Self.maxPerPass {
      let job: ConsumptionAnswer
      do {
        guard let claimed = try await answers.claim(limit: 1).first else { return }
        job = claimed
      } catch {
        logger.warning("consumption answers could not be claimed", ["error": .string("\(error)")])
        return
      }
      do {
        try await answer(job)
      } catch {
        // The lease runs out and another pass takes the job up again.
        logger.warning(
          "consumption answer not recorded",
          ["notification_uuid": .string(job.notificationUuid), "error": .string("\(error)")])
      }
      if LoopStop.requested { return }
    }
  }

  private func answer(_ job: ConsumptionAnswer) async throws {
    var fields: [String: LogValue] = [
      "notification_uuid": .string(job.notificationUuid),
      "transaction_id": .string(job.transactionId), "attempt": .int(job.attempts),
    ]
    if try await answers.expired(job) {
      logger.warning("consumption request not answered within Apple's window", fields)
      try await answers.record(
        job, state: .failed, information: nil, userId: job.userId, outcome: "window_passed",
        error: job.lastError)
      return
    }
    let (information, userId, reason) = try await answers.compose(job, policy: policy)
    guard let information else {
      if reason == "no_user" {
        // Apple may ask before the app reports the purchase: wait for it, within the window.
        let delay = retryDelay(job)
        logger.info(
          "consumption request waits for its purchase to be reported",
          fields.merging(["retry_in_s": .int(delay)]) { $1 })
        try await answers.record(
          job, state: .pending, information: nil, userId: nil, outcome: nil,
          error: "the transaction has no owner yet", retryAfterSeconds: delay)
        return
      }
      logger.info(
        "consumption request not answered", fields.merging(["reason": .string(reason ?? "")]) { $1 }
      )
      try await answers.record(
        job, state: .skipped, information: nil, userId: userId, outcome: reason, error: nil)
      return
    }
    switch await client.send(
      information, transactionId: job.transactionId, environment: job.environment)
    {
    case .success(let status):
      fields["status"] = .int(status)
      logger.notice("consumption information sent", fields)
      try await answers.record(
        job, state: .sent, information: information, userId: userId, outcome: "accepted",
        error: nil)
    case .failure(.refused(let status, let detail)):
      fields["status"] = .int(status)
      fields["error"] = .string(detail)
      logger.warning("Apple refused the consumption information", fields)
      try await answers.record(
        job, state: .failed, information: information, userId: userId, outcome: "refused",
        error: detail)
    case .failure(let failure):
      var delay = retryDelay(job)
      if case .rateLimited(let retryAt) = failure {
        // Never before the instant Apple named.
        delay = max(delay, Int(retryAt.timeIntervalSinceNow.rounded(.up)))
      }
      fields["error"] = .string("\(failure)")
      fields["retry_in_s"] = .int(delay)
      logger.warning("consumption information not sent; will retry", fields)
      try await answers.record(
        job, state: .pending, information: information, userId: userId, outcome: nil,
        error: "\(failure)", retryAfterSeconds: delay)
    }
  }

  /// Doubling from the base with each attempt, at most `maxRetrySeconds`.
  private func retryDelay(_ job: ConsumptionAnswer) -> Int {
    min(Self.maxRetrySeconds, retryBaseSeconds << min(max(job.attempts - 1, 0), 16))
  }
}
