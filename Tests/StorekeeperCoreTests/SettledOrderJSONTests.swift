import Foundation
import Testing

@testable import StorekeeperCore

@Suite struct SettledOrderJSONTests {
  static func product(grants: Grants, content: JSONValue) -> Product {
    Product(
      draft: ProductDraft(
        productId: "com.example.gold", type: .consumable, title: "Gold", description: "",
        price: "0.99", currency: "USD", sortOrder: 0, active: true, grants: grants,
        content: content),
      revision: 1, createdAt: "", updatedAt: "")
  }

  /// Contents an admin may store: keys out of order and of every kind, escapes, non-ASCII,
  /// nesting, and numbers the encoder writes as integers or as doubles.
  static let contents: [JSONValue] = [
    .object([:]),
    .null,
    .string("quote \" backslash \\ slash / é 😀 newline \n control \u{01}"),
    .object([
      "zeta": .number("1"), "Alpha": .bool(true), "alpha": .bool(false), "a10": .null,
      "a9": .array([
        .number("-42"), .number("1.5"), .number("0.1"), .number("1e21"),
        .number("100.0"), .number("1E-7"), .number("123456789.123"),
      ]),
      "é": .string("accent"),
      "_": .object(["b": .number("2"), "a": .number("9223372036854775807")]),
    ]),
    .array([.object(["y": .string("x"), "x": .string("y")]), .array([]), .string("")]),
  ]

  static let grants: [Grants] = [
    .empty,
    Grants(balance: ["gold": 100, "Gems": 5, "arrows_2": 1_000_000_000]),
    Grants(entitlement: "vip", durationDays: 30),
    Grants(entitlement: "lifetime"),
  ]

  @Test(arguments: contents.indices, grants.indices)
  func writesWhatTheEncoderWrites(content: Int, grants: Int) throws {
    let order = try OrderJSONTests.order([
      "trade_status": "TRADE_SUCCESS", "transaction_id": "2000000123456789",
      "environment": "Production", "paid_at": "2026-11-29T15:23:00.000Z",
    ])
    let product = Self.product(grants: Self.grants[grants], content: Self.contents[content])
    for (transactionId, newlyGranted) in [("2000000123456789", true), (nil, false)] {
      for credited in [true, false] {
        let settled = SettledOrder(
          order: order,
          delivery: Delivery(
            product: product, quantity: 3, transactionId: transactionId,
            newlyGranted: newlyGranted, balanceCredited: credited))
        let expected = String(decoding: try JSONCoding.encode(settled), as: UTF8.self)
        #expect(String(decoding: try settled.json(), as: UTF8.self) == expected)
      }
    }
  }

  @Test func aNumberNoDoubleHoldsFailsAsTheEncoderDoes() throws {
    let product = Self.product(grants: .empty, content: .object(["n": .number("1e999")]))
    let settled = SettledOrder(
      order: try OrderJSONTests.order(),
      delivery: Delivery(
        product: product, quantity: 1, transactionId: nil, newlyGranted: true,
        balanceCredited: true))
    #expect(throws: (any Error).self) { try JSONCoding.encode(settled) }
    #expect(throws: (any Error).self) { try settled.json() }
  }
}
