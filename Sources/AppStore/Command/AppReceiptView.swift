import Foundation

/// What `storekeeper verify` prints for an app receipt whose signature checked.
struct AppReceiptView: Encodable {
  struct Purchase: Encodable {
    var transactionId: String
    var originalTransactionId: String
    var productId: String?
    var quantity: Int64?
    var purchaseDate: String?
  }

  var kind = "app_receipt"
  var bundleId: String
  /// RFC 3339, UTC.
  var creationDate: String?
  var signer: String
  var purchases: [Purchase]

  init(_ receipt: SignedAppReceipt) {
    bundleId = receipt.contents.bundleId
    creationDate = receipt.contents.creationDate.map {
      ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: TimeInterval($0)))
    }
    signer = receipt.signer
    purchases = receipt.contents.purchases.map {
      Purchase(
        transactionId: $0.transactionId, originalTransactionId: $0.originalTransactionId,
        productId: $0.productId, quantity: $0.quantity, purchaseDate: $0.purchaseDate)
    }
  }
}
