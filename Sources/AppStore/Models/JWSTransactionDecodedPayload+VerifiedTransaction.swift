extension JWSTransactionDecodedPayload {
  /// The normalized transaction, which settling a purchase needs; nil when the payload lacks
  /// any of its identifiers, purchase date or environment.
  public var verifiedTransaction: VerifiedTransaction? { try? requireSettleable() }

  /// The normalized transaction, or `incompleteTransaction` when a field settling needs is
  /// absent. The payload decodes without them (Apple's libraries do too), so a verified
  /// signature alone never lets a transaction without an id, product, bundle, purchase date
  /// or environment credit anything.
  public func requireSettleable() throws(RefusalReason) -> VerifiedTransaction {
    guard let transactionId, let originalTransactionId, let bundleId, let productId,
      let purchaseDate, let environment
    else { throw .incompleteTransaction }
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
      webOrderLineItemId: webOrderLineItemId,
      appTransactionId: appTransactionId,
      price: price,
      currency: currency,
      storefront: storefront,
      offerType: offerType.map(Int.init),
      offerDiscountType: offerDiscountType,
      isUpgraded: isUpgraded,
      isFamilyShared: inAppOwnershipTypeValue == .familyShared,
      revocationType: revocationType,
      revocationPercentage: revocationPercentage.map(Int.init)
    )
  }
}
