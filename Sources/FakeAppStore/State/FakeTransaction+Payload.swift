import AppStore

extension FakeTransaction {
  /// The StoreKit 2 payload Apple would sign for this transaction at `signedDate`.
  func payload(signedDate: Int64) -> JWSTransactionDecodedPayload {
    JWSTransactionDecodedPayload(
      transactionId: transactionId,
      originalTransactionId: originalTransactionId,
      webOrderLineItemId: webOrderLineItemId,
      bundleId: bundleId,
      productId: productId,
      subscriptionGroupIdentifier: subscriptionGroupIdentifier,
      purchaseDate: purchaseDate,
      originalPurchaseDate: originalPurchaseDate,
      expiresDate: expiresDate,
      quantity: quantity,
      type: type.rawValue,
      appAccountToken: appAccountToken,
      inAppOwnershipType: ownership.rawValue,
      signedDate: signedDate,
      revocationReason: revocationReason,
      revocationDate: revocationDate,
      isUpgraded: isUpgraded ? true : nil,
      environment: environment,
      storefront: storefront,
      // Apple's id of the United States storefront; the fake knows no other's.
      storefrontId: storefront == "USA" ? "143441" : nil,
      transactionReason: transactionReason,
      currency: currency,
      price: price,
      appTransactionId: appTransactionId,
      revocationType: revocationType,
      revocationPercentage: revocationPercentage)
  }
}
