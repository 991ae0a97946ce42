/// One in-app purchase receipt (attribute type 17) of an app receipt, with the fields Apple
/// documents for it.
public struct AppReceiptPurchase: Sendable, Equatable {
  /// 1703.
  public var transactionId: String
  /// 1705; the transaction id itself when absent.
  public var originalTransactionId: String
  /// 1702.
  public var productId: String?
  /// 1701.
  public var quantity: Int64?
  /// 1704, RFC 3339 as Apple writes it.
  public var purchaseDate: String?

  public init(
    transactionId: String, originalTransactionId: String, productId: String? = nil,
    quantity: Int64? = nil, purchaseDate: String? = nil
  ) {
    self.transactionId = transactionId
    self.originalTransactionId = originalTransactionId
    self.productId = productId
    self.quantity = quantity
    self.purchaseDate = purchaseDate
  }
}
