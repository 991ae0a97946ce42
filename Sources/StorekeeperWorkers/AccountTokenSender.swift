import AppStore
import Foundation
import StorekeeperCore
import StorekeeperLogging

/// Sends the Set App Account Token calls owed to Apple (`app_account_token_jobs`), claimed a
/// batch at a time with the other instances (SKIP LOCKED, a lease per claim), each to the host
/// of its purchase's environment. A failure Apple may get over (no answer, a 5xx, a 429 whose
/// `Retry-After` is kept) is tried again on the retry policy, never before Apple's instant; a
/// refusal about the purchase ends the job.
package struct AccountTokenSender: Sendable {
  let jobs: AccountTokenJobs
  let client: AppAccountTokenClient
  let productionURL: URL
  let sandboxURL: URL
  let logger: Logger

  static let batchSize = 20
  /// Batches per run, so one run cannot go on for ever while jobs keep failing fast.
  static let maxBatches = 50

  package init(
    jobs: AccountTokenJobs, client: AppAccountTokenClient, productionURL: URL, sandboxURL: URL,
    logger: Logger
  ) {
    self.jobs = jobs
    self.client = client
    self.productionURL = productionURL
    self.sandboxURL = sandboxURL
    self.logger = logger
  }

  package func runOnce() async {
    for _ in 0..<Self.maxBatches {
      let claimed: [AccountTokenJob]
      do {
        claimed = try await jobs.claim(limit: Self.batchSize)
      } catch {
        logger.warning("app account tokens could not be claimed", ["error": .string("\(error)")])
        return
      }
      await withTaskGroup(of: Void.self) { group in
        for job in claimed { group.addTask { await send(job) } }
      }
      if claimed.count < Self.batchSize || LoopStop.requested { return }
    }
  }

  private func send(_ job: AccountTokenJob) async {
    let url = job.environment == AppStoreEnvironment.sandbox.rawValue ? sandboxURL : productionURL
    let outcome = await client.setToken(
      job.token, originalTransactionId: job.originalTransactionId, at: url)
    let result: AccountTokenJobs.Result
    var fields: [String: LogValue] = [
      "original_transaction_id": .string(job.originalTransactionId),
      "environment": .string(job.environment), "attempt": .int(job.attempt),
    ]
    switch outcome {
    case .success:
      result = .sent
      logger.notice("app account token set at Apple", fields)
    case .failure(.retryable(let why)):
      result = .retry(why, notBeforeMs: nil)
      fields["error"] = .string(why)
      logger.warning("app account token not set yet; will retry", fields)
    case .failure(.rateLimited(let retryAt)):
      let ms = Int64((retryAt.timeIntervalSince1970 * 1000).rounded(.up))
      result = .retry("rate limited", notBeforeMs: ms)
      fields["retry_at_ms"] = .int(Int(ms))
      logger.warning("app account token rate limited by Apple; will retry", fields)
    case .failure(.unauthorized):
      // The key's settings, not the purchase: retried (within the retry window) so the call
      // goes once they are fixed.
      result = .retry(
        "unauthorized: check APPLE_API_KEY_ID and APPLE_API_ISSUER_ID", notBeforeMs: nil)
      logger.error("Apple refused the App Store Server API key for an app account token", fields)
    case .failure(.refused(let status, let why)):
      result = .refused(why)
      fields["status"] = .int(status)
      fields["error"] = .string(why)
      logger.error("Apple refused an app account token", fields)
    }
    do {
      try await jobs.record(job, result)
    } catch {
      fields["error"] = .string("\(error)")
      logger.warning("app account token result could not be recorded", fields)
    }
  }
}
