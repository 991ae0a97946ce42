/// One Set App Account Token call a worker has claimed.
package struct AccountTokenJob: Sendable, Equatable {
  package var originalTransactionId: String
  /// "Production" or "Sandbox": which of Apple's hosts is asked.
  package var environment: String
  /// Lowercased UUID: the `app_account_token` of the order that holds the purchase.
  package var token: String
  /// The attempt this claim is (1 for the first), which its result is recorded against.
  package var attempt: Int
  /// Database time, epoch milliseconds: when the job was (last) queued, and now.
  package var queuedMs: Int64
  package var nowMs: Int64
}
