/// One page of Get Transaction History (`GET /inApps/v2/history/{transactionId}`), as Apple
/// answers it.
public struct TransactionHistoryPage: Sendable, Decodable, Equatable {
  /// Asks for the next page; Apple sends it with every page.
  public var revision: String?
  public var hasMore: Bool
  public var bundleId: String?
  public var appAppleId: Int64?
  /// "Production" or "Sandbox".
  public var environment: String?
  /// JWS transactions, verified like any StoreKit 2 signed transaction.
  public var signedTransactions: [String]
}
