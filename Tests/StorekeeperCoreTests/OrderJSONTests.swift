import Foundation
import Testing

@testable import StorekeeperCore

@Suite struct OrderJSONTests {
  static func order(_ overrides: [String: String] = [:]) throws -> Order {
    var fields: [String: Any] = [
      "trade_no": "20261129152208477xcoLMxPdVBxNhY2Nf89J", "user_id": "guest:42",
      "product_id": "com.example.gold", "quantity": 3, "price": "6.00", "currency": "CNY",
      "amount": "18.00", "app_account_token": "6f1c2a7e-1d2b-4c3d-9e8f-0a1b2c3d4e5f",
      "trade_status": "WAIT_BUYER_PAY", "origin": "order", "created_at": "2026-11-29T15:22:08.477Z",
      "expires_at": "2026-11-30T15:22:08.477Z",
    ]
    fields.merge(overrides) { _, new in new }
    let data = try JSONSerialization.data(withJSONObject: fields)
    return try JSONDecoder().decode(Order.self, from: data)
  }

  static let cases: [[String: String]] = [
    [:],
    [
      "trade_status": "TRADE_SUCCESS", "transaction_id": "2000000123456789",
      "environment": "Production", "verification": "failed",
      "paid_at": "2026-11-29T15:23:00.000Z",
    ],
    [
      "trade_status": "TRADE_CLOSED", "close_reason": "refunded",
      "closed_at": "2026-12-01T00:00:00.000Z",
    ],
    ["user_id": "quote \" backslash \\ slash / é 😀 newline \n tab \t cr \r"],
    ["user_id": "control \u{01}\u{1F}"],
    // The offering the order named, with and without the experiment that assigned it.
    ["placement": "main_shop", "offering": "summer"],
    [
      "placement": "onboarding", "offering": "trial-b", "experiment": "trial_length",
      "variant": "b", "trade_status": "TRADE_SUCCESS", "paid_at": "2026-11-29T15:23:00.000Z",
    ],
  ]

  @Test(arguments: cases.indices)
  func writesWhatTheEncoderWrites(index: Int) throws {
    let order = try Self.order(Self.cases[index])
    let expected = try JSONCoding.encode(order)
    #expect(
      String(decoding: order.json, as: UTF8.self) == String(decoding: expected, as: UTF8.self))
    // What the case named is what is written: a field the writer dropped fails here.
    let written = try JSONSerialization.jsonObject(with: Data(order.json)) as? [String: Any]
    for (key, value) in Self.cases[index] {
      #expect(written?[key] as? String == value, "\(key)")
    }
  }
}
