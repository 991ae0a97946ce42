/// What an app receipt's payload says: which app it names, when Apple made it and which
/// transactions it lists. Read by `AppReceiptReader`; believed only once
/// `AppReceiptSignatureVerifier` has found Apple's signature over it, and even then only as
/// the candidates to ask Apple about: its signed answers are what pays.
public struct AppReceiptContents: Sendable, Equatable {
  /// Attribute type 2.
  public var bundleId: String
  /// Attribute type 12, seconds since the epoch: the moment the signing chain is judged at.
  public var creationDate: Int64?
  /// Attribute type 17, in receipt order.
  public var purchases: [AppReceiptPurchase]

  public init(bundleId: String, creationDate: Int64? = nil, purchases: [AppReceiptPurchase]) {
    self.bundleId = bundleId
    self.creationDate = creationDate
    self.purchases = purchases
  }

  /// Distinct transaction ids, in receipt order.
  public var transactionIds: [String] {
    var seen = Set<String>()
    return purchases.map(\.transactionId).filter { seen.insert($0).inserted }
  }
}
