import Foundation

/// An iOS 6-style transaction receipt: one transaction's own receipt, as
/// `SKPaymentTransaction.transactionReceipt` hands it to the app.
///
/// Its bytes are `FAKE-TX-RECEIPT:<transaction id>`, dots up to a multiple of three bytes and
/// `FakeReceipt.tail`, so its base64 always holds `+` and `/` like a real receipt's (and like
/// the fake's app receipts); only this fake's verifyReceipt understands them.
enum FakeTransactionReceipt {
  static let prefix = "FAKE-TX-RECEIPT:"

  static func base64(transactionId: String) -> String {
    var bytes = Array((prefix + transactionId).utf8)
    while bytes.count % 3 != 0 { bytes.append(UInt8(ascii: ".")) }
    return Data(bytes + FakeReceipt.tail).base64EncodedString()
  }

  /// The transaction id inside `receipt-data`, or nil when it is not a fake transaction receipt.
  static func transactionId(fromBase64 text: String) -> String? {
    guard let data = Data(base64Encoded: text) else { return nil }
    var bytes = [UInt8](data)
    guard bytes.starts(with: prefix.utf8) else { return nil }
    if Array(bytes.suffix(FakeReceipt.tail.count)) == FakeReceipt.tail {
      bytes.removeLast(FakeReceipt.tail.count)
    }
    while bytes.last == UInt8(ascii: ".") { bytes.removeLast() }
    let id = String(decoding: bytes.dropFirst(prefix.utf8.count), as: UTF8.self)
    return id.isEmpty ? nil : id
  }
}
