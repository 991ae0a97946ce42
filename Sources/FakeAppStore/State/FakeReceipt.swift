import Foundation

/// An app receipt: what one Apple account's device holds for one app in one environment.
/// Every purchase of that account lands in it, as on a real device.
///
/// Its bytes are `FAKE-RECEIPT:<id>`, which only this fake's verifyReceipt understands.
struct FakeReceipt: Sendable {
  static let prefix = "FAKE-RECEIPT:"

  var id: String
  var appleAccount: String
  var bundleId: String
  var environment: String
  /// Milliseconds since 1970.
  var createdAt: Int64
  /// In purchase order; renewals are appended like any other transaction.
  var transactionIds: [String] = []

  /// What the client posts as `receipt-data`.
  var base64: String { Data((Self.prefix + id).utf8).base64EncodedString() }

  /// The receipt id inside `receipt-data`, or nil when it is not base64 of a fake receipt.
  static func id(fromBase64 text: String) -> String? {
    guard let data = Data(base64Encoded: text) else { return nil }
    let decoded = String(decoding: data, as: UTF8.self)
    guard decoded.hasPrefix(prefix) else { return nil }
    let id = String(decoded.dropFirst(prefix.count))
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
