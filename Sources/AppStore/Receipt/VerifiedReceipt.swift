/// A receipt Apple confirmed (status 0, or 21006 for an expired subscription's transaction
/// receipt) for this app in an allowed environment.
public struct VerifiedReceipt: Sendable, Equatable {
  /// "Production" or "Sandbox".
  public var environment: String
  public var bundleId: String
  /// Which of Apple's two formats the client posted.
  public var format: ReceiptFormat
  /// The receipt's transactions ∪ `latest_receipt_info`, one entry per transaction id (the
  /// latest info wins).
  public var transactions: [VerifiedTransaction]
  /// The newest base64 receipt Apple returned, for auto-renewable subscriptions.
  public var latestReceipt: String?
  /// What each auto-renewable subscription does at its next renewal (app receipts only).
  public var pendingRenewals: [PendingRenewal]

  public init(
    environment: String, bundleId: String, format: ReceiptFormat = .app,
    transactions: [VerifiedTransaction], latestReceipt: String? = nil,
    pendingRenewals: [PendingRenewal] = []
  ) {
    self.environment = environment
    self.bundleId = bundleId
    self.format = format
    self.transactions = transactions
    self.latestReceipt = latestReceipt
    self.pendingRenewals = pendingRenewals
  }
}
