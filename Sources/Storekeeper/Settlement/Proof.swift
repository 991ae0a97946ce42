import HTTP

/// What a client sends as proof of payment: a StoreKit 1 app receipt (base64, verified through
/// Apple's verifyReceipt) or a StoreKit 2 signed transaction (JWS, verified offline).
enum Proof: Sendable, Equatable {
  case receipt(String)
  case signedTransaction(String)

  static let maxReceiptCharacters = 1_000_000
  static let maxSignedTransactionCharacters = 64 * 1024

  var kind: String {
    switch self {
    case .receipt: "receipt"
    case .signedTransaction: "signed_transaction"
    }
  }

  var text: String {
    switch self {
    case .receipt(let text), .signedTransaction(let text): text
    }
  }

  var field: String { kind }

  /// Reads exactly one of `receipt` / `signed_transaction` (seed 000's form uses `receipt`).
  static func read(_ fields: inout RequestFields, required: Bool) -> Proof? {
    let receipt = fields.string("receipt", maxLength: maxReceiptCharacters)
    let signed = fields.string("signed_transaction", maxLength: maxSignedTransactionCharacters)
    switch (receipt, signed) {
    case (let receipt?, nil):
      return receipt.isEmpty ? missing(&fields, "receipt") : .receipt(receipt)
    case (nil, let signed?):
      return signed.isEmpty ? missing(&fields, "signed_transaction") : .signedTransaction(signed)
    case (.some, .some):
      fields.fail("signed_transaction", "send either receipt or signed_transaction, not both")
      return nil
    case (nil, nil):
      if required && !fields.has("receipt") && !fields.has("signed_transaction") {
        fields.fail("receipt", "receipt or signed_transaction is required")
      }
      return nil
    }
  }

  private static func missing(_ fields: inout RequestFields, _ name: String) -> Proof? {
    fields.fail(name, "must not be empty")
    return nil
  }
}
