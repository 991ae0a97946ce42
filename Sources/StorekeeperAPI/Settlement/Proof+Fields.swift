import StorekeeperCore

/// Reading a proof from a request body (the edge's part of `Proof`).
extension Proof {
  /// Reads exactly one of `receipt` / `signed_transaction` (seed 000's form uses `receipt`) /
  /// `purchase_token` (Google Play's). `receiptField` names the receipt where a post may call it
  /// otherwise (`receipt-data`, Apple's verifyReceipt name), so errors name what was sent.
  static func read(_ fields: inout RequestFields, required: Bool, receiptField: String = "receipt")
    -> Proof?
  {
    let receipt = fields.string(receiptField, maxLength: maxReceiptCharacters)
    let signed = fields.string("signed_transaction", maxLength: maxSignedTransactionCharacters)
    if let token = fields.string("purchase_token", maxLength: maxPurchaseTokenCharacters) {
      guard receipt == nil, signed == nil else {
        fields.fail(
          "purchase_token", "send one proof: purchase_token, receipt or signed_transaction")
        return nil
      }
      return readToken(token, &fields)
    }
    switch (receipt, signed) {
    case (let receipt?, nil):
      return receipt.isEmpty ? missing(&fields, receiptField) : .receipt(receipt)
    case (nil, let signed?):
      return signed.isEmpty ? missing(&fields, "signed_transaction") : .signedTransaction(signed)
    case (.some, .some):
      fields.fail("signed_transaction", "send either receipt or signed_transaction, not both")
      return nil
    case (nil, nil):
      if required && !fields.has(receiptField) && !fields.has("signed_transaction") {
        fields.fail("receipt", "receipt or signed_transaction is required")
      }
      return nil
    }
  }

  /// A purchase token as Google issues them: letters, digits, `.`, `_` and `-`, which is all
  /// that may reach Google's URL.
  static func readToken(_ token: String, _ fields: inout RequestFields) -> Proof? {
    guard !token.isEmpty else { return missing(&fields, "purchase_token") }
    guard StoreIdentifier.isValid(token, maxLength: maxPurchaseTokenCharacters) else {
      fields.fail("purchase_token", "must be letters, digits, '.', '_' and '-' only")
      return nil
    }
    return .googlePurchase(token)
  }

  private static func missing(_ fields: inout RequestFields, _ name: String) -> Proof? {
    fields.fail(name, "must not be empty")
    return nil
  }
}
