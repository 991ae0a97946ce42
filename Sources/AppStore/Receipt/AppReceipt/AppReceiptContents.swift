/// What an app receipt's PKCS#7 container says, read locally and not trusted: which app it
/// names and which transactions it lists. Only Apple's signed answers about those
/// transactions are facts.
public struct AppReceiptContents: Sendable, Equatable {
  /// Attribute type 2.
  public var bundleId: String
  /// Attribute type 17, in receipt order.
  public var purchases: [AppReceiptPurchase]

  public init(bundleId: String, purchases: [AppReceiptPurchase]) {
    self.bundleId = bundleId
    self.purchases = purchases
  }

  /// Distinct transaction ids, in receipt order.
  public var transactionIds: [String] {
    var seen = Set<String>()
    return purchases.map(\.transactionId).filter { seen.insert($0).inserted }
  }
}
