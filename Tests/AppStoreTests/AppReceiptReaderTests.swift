import FakeAppStoreTestSupport
import Foundation
import Testing

@testable import AppStore
@testable import FakeAppStore

/// The app receipt's PKCS#7 container read locally: receipts the fake signs as Apple does, and
/// what an attacker may post instead (truncated, garbage, oversized, deeply nested, lying
/// lengths). Nothing may crash; anything not an app receipt reads as nil.
@Suite struct AppReceiptReaderTests {
  /// A real PKCS#7 signedData around `payload`, signed by a fake receipt signing leaf.
  static func container(_ payload: [UInt8]) throws -> [UInt8] {
    try FakeCertificateAuthority().signPKCS7(payload)
  }

  static func purchase(_ fields: [[UInt8]]) -> [UInt8] {
    FakeDER.attribute(17, FakeDER.set(fields))
  }

  @Test func readsTheTransactionsOfAReceiptTheFakeIssued() async throws {
    try await FakeHarness.with { fake in
      let first = try await fake.purchase(["apple_account": "carol", "quantity": 2])
      let second = try await fake.purchase([
        "apple_account": "carol", "product_id": "vip.month",
        "type": "Auto-Renewable Subscription",
      ])
      let receipt = try #require(second.string("receipt"))
      let contents = try #require(AppReceiptReader.read(base64: receipt))
      #expect(contents.bundleId == FakeHarness.bundleId)
      let ids = [first.string("transaction_id"), second.string("transaction_id")].compactMap { $0 }
      // DER sorts a SET's members, so the receipt's order is not the purchases'.
      let purchases = contents.purchases.sorted { $0.transactionId < $1.transactionId }
      #expect(purchases.map(\.transactionId) == ids)
      #expect(purchases.map(\.productId) == ["gold.100", "vip.month"])
      #expect(purchases.map(\.quantity) == [2, 1])
      #expect(purchases.map(\.originalTransactionId) == ids)
      #expect(contents.purchases.allSatisfy { $0.purchaseDate?.hasSuffix("Z") == true })
    }
  }

  @Test func theIOS6TransactionReceiptIsNoAppReceipt() async throws {
    try await FakeHarness.with { fake in
      let purchase = try await fake.purchase(["receipt_style": "transaction"])
      #expect(AppReceiptReader.read(base64: try #require(purchase.string("receipt"))) == nil)
      #expect(AppReceiptReader.read(base64: try #require(purchase.string("app_receipt"))) != nil)
    }
  }

  @Test func everyTruncationOfAReceiptIsRefusedWithoutACrash() throws {
    let payload = FakeDER.set([
      FakeDER.attribute(2, FakeDER.utf8String(FakeHarness.bundleId)),
      Self.purchase([
        FakeDER.attribute(1703, FakeDER.utf8String("2000000000000001")),
        FakeDER.attribute(1702, FakeDER.utf8String("gold.100")),
      ]),
    ])
    let der = try Self.container(payload)
    #expect(AppReceiptReader.read(der: der)?.transactionIds == ["2000000000000001"])
    for length in stride(from: 0, to: der.count, by: 7) {
      #expect(AppReceiptReader.read(der: Array(der.prefix(length))) == nil)
    }
    // The payload alone, cut anywhere: never a partial answer.
    for length in 0..<payload.count {
      #expect(AppReceiptReader.contents(of: Array(payload.prefix(length))) == nil)
    }
  }

  @Test func garbageIsRefused() {
    var generator = SplitMix64(seed: 11)
    for size in [1, 2, 16, 200, 4096] {
      for _ in 0..<40 {
        let bytes = (0..<size).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
        #expect(AppReceiptReader.read(der: bytes) == nil)
        #expect(AppReceiptReader.contents(of: bytes) == nil)
      }
    }
    #expect(AppReceiptReader.read(base64: "not base64 at all!") == nil)
    #expect(AppReceiptReader.read(base64: "") == nil)
    #expect(
      AppReceiptReader.read(base64: Data("FAKE-TX-RECEIPT:1".utf8).base64EncodedString()) == nil)
  }

  @Test func oversizedInputIsRefusedBeforeParsing() {
    let huge = String(repeating: "A", count: ReceiptData.maximumLength + 4)
    #expect(AppReceiptReader.read(base64: huge) == nil)
    #expect(
      AppReceiptReader.read(der: [UInt8](repeating: 0x30, count: ReceiptData.maximumLength + 1))
        == nil)
  }

  @Test func deeplyNestedInputIsRefused() throws {
    // 100 000 nested SETs as the payload, and as the container itself.
    var nested: [UInt8] = [0x05, 0x00]
    for _ in 0..<100_000 { nested = FakeDER.element(0x31, nested) }
    #expect(AppReceiptReader.contents(of: nested) == nil)
    #expect(AppReceiptReader.read(der: nested) == nil)
    #expect(AppReceiptReader.read(der: try Self.container(nested)) == nil)
    // An in-app purchase nested inside an in-app purchase is not Apple's layout.
    let inner = Self.purchase([FakeDER.attribute(1703, FakeDER.utf8String("1"))])
    let payload = FakeDER.set([
      FakeDER.attribute(2, FakeDER.utf8String("b")),
      Self.purchase([FakeDER.attribute(1703, FakeDER.utf8String("2")), inner]),
    ])
    #expect(AppReceiptReader.read(der: try Self.container(payload))?.transactionIds == ["2"])
  }

  @Test func lyingLengthsAndWrongTypesAreRefused() throws {
    let bundle = FakeDER.attribute(2, FakeDER.utf8String("b"))
    // A SET claiming more bytes than there are.
    #expect(AppReceiptReader.contents(of: [0x31, 0x84, 0x7F, 0xFF, 0xFF, 0xFF] + bundle) == nil)
    // Indefinite length (BER) inside the payload.
    #expect(AppReceiptReader.contents(of: [0x31, 0x80] + bundle + [0x00, 0x00]) == nil)
    // Trailing bytes after the SET.
    #expect(AppReceiptReader.contents(of: FakeDER.set([bundle]) + [0x00]) == nil)
    // A bundle id that is an INTEGER, a transaction id that is an OCTET STRING.
    #expect(
      AppReceiptReader.contents(of: FakeDER.set([FakeDER.attribute(2, FakeDER.integer(5))])) == nil)
    let octetId = Self.purchase([FakeDER.attribute(1703, FakeDER.octetString([0x31]))])
    #expect(AppReceiptReader.contents(of: FakeDER.set([bundle, octetId])) == nil)
    // No bundle id; a purchase without a transaction id; an over-long id.
    #expect(AppReceiptReader.contents(of: FakeDER.set([])) == nil)
    let anonymous = Self.purchase([FakeDER.attribute(1702, FakeDER.utf8String("gold"))])
    #expect(AppReceiptReader.contents(of: FakeDER.set([bundle, anonymous])) == nil)
    let long = Self.purchase([
      FakeDER.attribute(1703, FakeDER.utf8String(String(repeating: "9", count: 300)))
    ])
    #expect(AppReceiptReader.contents(of: FakeDER.set([bundle, long])) == nil)
    // Invalid UTF-8 in a string.
    let badUTF8 = FakeDER.attribute(2, FakeDER.element(0x0C, [0xFF, 0xFE]))
    #expect(AppReceiptReader.contents(of: FakeDER.set([badUTF8])) == nil)
    // A negative or huge attribute type.
    let negative = FakeDER.sequence([
      FakeDER.element(0x02, [0xFF]), FakeDER.integer(1), FakeDER.octetString([]),
    ])
    #expect(AppReceiptReader.contents(of: FakeDER.set([bundle, negative])) == nil)
  }

  @Test func countsAreBounded() throws {
    let bundle = FakeDER.attribute(2, FakeDER.utf8String("b"))
    let one = Self.purchase([FakeDER.attribute(1703, FakeDER.utf8String("7"))])
    let many = [bundle] + Array(repeating: one, count: AppReceiptReader.maximumPurchases + 1)
    #expect(AppReceiptReader.contents(of: FakeDER.set(many)) == nil)
    let allowed = [bundle] + Array(repeating: one, count: 3)
    // Repeated purchases of one transaction read as one id.
    #expect(AppReceiptReader.contents(of: FakeDER.set(allowed))?.transactionIds == ["7"])
  }
}
