import StorekeeperCore

/// The 200 JSON answer of `POST /v1/receipts`: the outcome with `"status": 0`, verifyReceipt's
/// success code, because apps written against Apple's endpoint (seed 002) read `status` and take
/// only 0 for a verified purchase. No other answer says 0: a refusal is problem+json whose
/// `status` is its HTTP status, and a 202 has none, so such an app tries again.
struct ReceiptAnswer: Encodable {
  static let verifiedStatus = 0

  var outcome: ReceiptOutcome

  enum CodingKeys: String, CodingKey { case status }

  func encode(to encoder: any Encoder) throws {
    try outcome.encode(to: encoder)
    var container = encoder.container(keyedBy: CodingKeys.self)
    try container.encode(Self.verifiedStatus, forKey: .status)
  }
}
