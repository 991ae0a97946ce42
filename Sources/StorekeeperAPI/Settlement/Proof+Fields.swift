import StorekeeperCore

/// Reading a proof from a request body (the edge's part of `Proof`).
extension Proof {
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
