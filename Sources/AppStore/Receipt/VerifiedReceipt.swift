/// A receipt Apple confirmed (status 0) for this app in an allowed environment.
public struct VerifiedReceipt: Sendable, Codable, Equatable {
  /// "Production" or "Sandbox".
  public var environment: String
  public var bundleId: String
  /// `in_app` ∪ `latest_receipt_info`, one entry per transaction id (the latest info wins).
  public var transactions: [VerifiedTransaction]
  /// The newest base64 receipt Apple returned, for auto-renewable subscriptions.
  public var latestReceipt: String?

  public init(
    environment: String, bundleId: String, transactions: [VerifiedTransaction],
    latestReceipt: String? = nil
  ) {
    self.environment = environment
    self.bundleId = bundleId
    self.transactions = transactions
    self.latestReceipt = latestReceipt
  }
}
