import Foundation

/// An app receipt as Apple lays it out: a PKCS#7 signedData, signed by the receipt signing
/// leaf, wrapping a SET of `ReceiptAttribute`s — bundle id (2), app version (3), opaque value
/// (4), SHA-1 hash (5), creation date (12), original app version (19) and one in-app purchase
/// receipt (17) per transaction, each a SET of its own attributes (1701 quantity, 1702 product
/// id, 1703 transaction id, 1704 purchase date, 1705 original transaction id, 1706 original
/// purchase date, 1708 expiry, 1711 web order line item id, 1712 cancellation date).
///
/// A server reads the transaction ids from it and asks the App Store Server API; this fake's
/// verifyReceipt finds the account's receipt through the same ids.
enum FakeAppReceiptContainer {
  /// The signed payload: the SET of receipt attributes.
  static func payload(_ receipt: FakeReceipt, transactions: [FakeTransaction]) -> [UInt8] {
    var attributes: [[UInt8]] = [
      FakeDER.attribute(2, FakeDER.utf8String(receipt.bundleId)),
      FakeDER.attribute(3, FakeDER.utf8String("1.0")),
      FakeDER.attribute(4, Array(receipt.id.utf8)),
      FakeDER.attribute(5, [UInt8](repeating: 0x5A, count: 20)),
      FakeDER.attribute(12, FakeDER.ia5String(rfc3339(receipt.createdAt))),
      FakeDER.attribute(19, FakeDER.utf8String("1.0")),
    ]
    for transaction in transactions {
      var fields: [[UInt8]] = [
        FakeDER.attribute(1701, FakeDER.integer(Int64(transaction.quantity))),
        FakeDER.attribute(1702, FakeDER.utf8String(transaction.productId)),
        FakeDER.attribute(1703, FakeDER.utf8String(transaction.transactionId)),
        FakeDER.attribute(1704, FakeDER.ia5String(rfc3339(transaction.purchaseDate))),
        FakeDER.attribute(1705, FakeDER.utf8String(transaction.originalTransactionId)),
        FakeDER.attribute(1706, FakeDER.ia5String(rfc3339(transaction.originalPurchaseDate))),
      ]
      if let expires = transaction.expiresDate {
        fields.append(FakeDER.attribute(1708, FakeDER.ia5String(rfc3339(expires))))
      }
      if let item = transaction.webOrderLineItemId.flatMap(Int64.init) {
        fields.append(FakeDER.attribute(1711, FakeDER.integer(item)))
      }
      if let revoked = transaction.revocationDate {
        fields.append(FakeDER.attribute(1712, FakeDER.ia5String(rfc3339(revoked))))
      }
      attributes.append(FakeDER.attribute(17, FakeDER.set(fields)))
    }
    return FakeDER.set(attributes)
  }

  /// Apple's receipt dates: RFC 3339 in UTC, to the second.
  static func rfc3339(_ milliseconds: Int64) -> String {
    let formatter = ISO8601DateFormatter()
    formatter.formatOptions = [.withInternetDateTime]
    return formatter.string(from: Date(timeIntervalSince1970: Double(milliseconds) / 1000))
  }
}
