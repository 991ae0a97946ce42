import Foundation

/// `ProductPurchaseV2` of androidpublisher v3 (`purchases.productsv2.getproductpurchasev2`),
/// as far as Storekeeper reads it: when the purchase became PURCHASED, which is where Google's
/// three days to acknowledge it start (for a purchase that was pending first, later than v1's
/// `purchaseTimeMillis`).
public struct ProductPurchaseV2: Sendable, Decodable, Equatable {
  /// `google-datetime`; absent until the payment is complete.
  public var purchaseCompletionTime: String?

  public init(purchaseCompletionTime: String? = nil) {
    self.purchaseCompletionTime = purchaseCompletionTime
  }

  public var purchaseCompletionDate: Date? { GoogleDateTime.date(purchaseCompletionTime) }
}
