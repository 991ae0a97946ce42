import Foundation

/// Reads an app receipt (the base64 `appStoreReceiptURL` file a StoreKit 1 client posts)
/// without Apple: the PKCS#7 signedData container through `d2i_PKCS7`, then its payload, a
/// SET of `ReceiptAttribute ::= SEQUENCE { type INTEGER, version INTEGER, value OCTET STRING }`
/// as Apple documents it. It checks no signature: `AppReceiptSignatureVerifier` does, and is
/// what the server calls; this reads what a signature covers.
///
/// Everything here comes from a client: sizes and counts are bounded and any malformed input
/// reads as nil, never a crash.
public enum AppReceiptReader {
  /// Attributes at the top level of a payload, and inside one in-app purchase receipt.
  public static let maximumAttributes = 20_000
  public static let maximumPurchaseAttributes = 64
  /// In-app purchase receipts in one receipt.
  public static let maximumPurchases = 2_000
  public static let maximumStringLength = 256

  enum AttributeType {
    static let bundleId: Int64 = 2
    static let creationDate: Int64 = 12
    static let inAppPurchase: Int64 = 17
    static let quantity: Int64 = 1701
    static let productId: Int64 = 1702
    static let transactionId: Int64 = 1703
    static let purchaseDate: Int64 = 1704
    static let originalTransactionId: Int64 = 1705
  }

  /// The receipt in `base64` (as repaired by `ReceiptData`), or nil when it is not an app
  /// receipt: not base64, not PKCS#7 signedData, or a payload that is not Apple's.
  public static func read(base64: String) -> AppReceiptContents? {
    guard base64.utf8.count <= ReceiptData.maximumLength,
      let data = Data(base64Encoded: base64)
    else { return nil }
    return read(der: [UInt8](data))
  }

  /// The same from the container's bytes.
  public static func read(der: [UInt8]) -> AppReceiptContents? {
    guard !der.isEmpty, der.count <= ReceiptData.maximumLength,
      let container = PKCS7Container(der: der)
    else { return nil }
    return contents(of: container.content)
  }

  /// The payload's bundle id and in-app purchases; nil unless it is a SET of receipt
  /// attributes naming a bundle id.
  static func contents(of payload: [UInt8]) -> AppReceiptContents? {
    let reader = DERReader(bytes: payload)
    guard let top = reader.elements(in: 0..<payload.count, limit: 1), top.count == 1,
      top[0].isUniversal(DERElement.set, constructed: true),
      let attributes = attributes(reader, in: top[0].content, limit: maximumAttributes)
    else { return nil }
    var bundleId: String?
    var creationDate: Int64?
    var purchases: [AppReceiptPurchase] = []
    for (type, value) in attributes {
      switch type {
      case AttributeType.bundleId:
        guard bundleId == nil,
          let text = reader.string(in: value, maxLength: maximumStringLength)
        else { return nil }
        bundleId = text
      case AttributeType.creationDate:
        guard creationDate == nil,
          let text = reader.string(in: value, maxLength: maximumStringLength),
          let seconds = RFC3339.seconds(text)
        else { return nil }
        creationDate = seconds
      case AttributeType.inAppPurchase:
        guard purchases.count < maximumPurchases, let purchase = purchase(reader, in: value)
        else { return nil }
        purchases.append(purchase)
      default:
        continue
      }
    }
    guard let bundleId, !bundleId.isEmpty else { return nil }
    return AppReceiptContents(
      bundleId: bundleId, creationDate: creationDate, purchases: purchases)
  }

  /// One in-app purchase receipt: itself a SET of receipt attributes.
  private static func purchase(_ reader: DERReader, in range: Range<Int>) -> AppReceiptPurchase? {
    guard let set = reader.elements(in: range, limit: 1), set.count == 1,
      set[0].isUniversal(DERElement.set, constructed: true),
      let attributes = attributes(reader, in: set[0].content, limit: maximumPurchaseAttributes)
    else { return nil }
    var transactionId: String?
    var original: String?
    var productId: String?
    var quantity: Int64?
    var purchaseDate: String?
    for (type, value) in attributes {
      switch type {
      case AttributeType.transactionId:
        transactionId = reader.string(in: value, maxLength: maximumStringLength)
        guard transactionId != nil else { return nil }
      case AttributeType.originalTransactionId:
        original = reader.string(in: value, maxLength: maximumStringLength)
      case AttributeType.productId:
        productId = reader.string(in: value, maxLength: maximumStringLength)
      case AttributeType.quantity:
        quantity = reader.integer(in: value)
      case AttributeType.purchaseDate:
        purchaseDate = reader.string(in: value, maxLength: maximumStringLength)
      default:
        continue
      }
    }
    guard let transactionId, !transactionId.isEmpty else { return nil }
    return AppReceiptPurchase(
      transactionId: transactionId,
      originalTransactionId: original.flatMap { $0.isEmpty ? nil : $0 } ?? transactionId,
      productId: productId, quantity: quantity, purchaseDate: purchaseDate)
  }

  /// `(type, value range)` of each `ReceiptAttribute` filling `range`.
  private static func attributes(_ reader: DERReader, in range: Range<Int>, limit: Int)
    -> [(type: Int64, value: Range<Int>)]?
  {
    guard let elements = reader.elements(in: range, limit: limit) else { return nil }
    var found: [(type: Int64, value: Range<Int>)] = []
    found.reserveCapacity(elements.count)
    for element in elements {
      guard element.isUniversal(DERElement.sequence, constructed: true),
        let fields = reader.elements(in: element.content, limit: 3), fields.count == 3,
        let type = reader.integer(fields[0]), reader.integer(fields[1]) != nil,
        fields[2].isUniversal(DERElement.octetString, constructed: false)
      else { return nil }
      found.append((type, fields[2].content))
    }
    return found
  }
}
