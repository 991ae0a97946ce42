extension JWSTransactionDecodedPayload {
  /// The normalized transaction; nil when the payload lacks a purchase date or environment.
  public var verifiedTransaction: VerifiedTransaction? {
    guard let purchaseDate, let environment else { return nil }
    return VerifiedTransaction(
      transactionId: transactionId,
      originalTransactionId: originalTransactionId,
      bundleId: bundleId,
      productId: productId,
      quantity: quantity ?? 1,
      purchaseDate: purchaseDate,
      expiresDate: expiresDate,
      revocationDate: revocationDate,
      revocationReason: revocationReason.map(Int.init),
      appAccountToken: appAccountToken?.lowercased(),
      environment: environment,
      type: type,
      webOrderLineItemId: webOrderLineItemId
    )
  }
}
