import Foundation

/// An app receipt: what one Apple account's device holds for one app in one environment.
/// Every purchase of that account lands in it, as on a real device.
///
/// Its bytes are `FAKE-RECEIPT:<id>` and a short binary tail; only this fake's verifyReceipt
/// understands them.
struct FakeReceipt: Sendable {
  static let prefix = "FAKE-RECEIPT:"

  var id: String
  var appleAccount: String
  var bundleId: String
  var environment: String
  /// The account's download of the app (`appTransactionId`), the same for every purchase in
  /// this receipt, as Apple keeps it across re-installs.
  var appTransactionId: String
  /// Milliseconds since 1970: when Apple last issued this receipt. A device gets a new
  /// receipt with every transaction, so each one added moves this to the moment it was
  /// added (`reissue`), and the signing chain is judged then, however old the purchases.
  var createdAt: Int64
  /// In purchase order; renewals are appended like any other transaction.
  var transactionIds: [String] = []

  /// Adds a transaction, as Apple issues the device a new receipt holding it.
  mutating func reissue(adding transactionId: String) {
    transactionIds.append(transactionId)
    createdAt = max(createdAt, Int64(Date().timeIntervalSince1970 * 1000))
  }

  /// Binary tail that base64-encodes to "++++////": like a real (DER) receipt, every fake
  /// receipt has `+` and `/` in its base64, so form-post damage (`+` → space) and url-safe
  /// spellings always show up in tests.
  static let tail: [UInt8] = [0xFB, 0xEF, 0xBE, 0xFF, 0xFF, 0xFF]

  /// What the client posts as `receipt-data`.
  var base64: String { Data(Array((Self.prefix + id).utf8) + Self.tail).base64EncodedString() }

  /// The receipt id inside `receipt-data`, or nil when it is not base64 of a fake receipt.
  static func id(fromBase64 text: String) -> String? {
    guard let data = Data(base64Encoded: text) else { return nil }
    var bytes = [UInt8](data)
    guard bytes.starts(with: prefix.utf8) else { return nil }
    if bytes.count >= tail.count, Array(bytes.suffix(tail.count)) == tail {
      bytes.removeLast(tail.count)
    }
    let id = String(decoding: bytes.dropFirst(prefix.utf8.count), as: UTF8.self)
    return id.isEmpty ? nil : id
  }

  static func makeId() -> String {
    var generator = SystemRandomNumberGenerator()
    return (0..<2).map { _ in
      let text = String(generator.next() as UInt64, radix: 16)
      return String(repeating: "0", count: 16 - text.count) + text
    }.joined()
  }
}
