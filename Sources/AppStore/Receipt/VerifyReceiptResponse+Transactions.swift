extension VerifyReceiptResponse {
  /// The receipt's transactions (`in_app`, or the transaction receipt itself) ∪
  /// `latest_receipt_info` ∪ `latest_expired_receipt_info` as normalized transactions,
  /// deduplicated by transaction id; the latest info wins because it carries later facts
  /// (renewals, cancellations). Entries without a transaction id, product id or purchase date
  /// are dropped.
  func transactions(bundleId: String, environment: String) -> [VerifiedTransaction] {
    var order: [String] = []
    var byId: [String: VerifiedTransaction] = [:]
    let entries =
      (receipt?.transactions ?? []) + (latestReceiptInfo ?? []) + (latestExpiredReceiptInfo ?? [])
    for entry in entries {
      guard
        let transaction = entry.verifiedTransaction(bundleId: bundleId, environment: environment)
      else {
        continue
      }
      if byId.updateValue(transaction, forKey: transaction.transactionId) == nil {
        order.append(transaction.transactionId)
      }
    }
    return order.compactMap { byId[$0] }
  }
}

extension VerifyReceiptResponse.InApp {
  func verifiedTransaction(bundleId: String, environment: String) -> VerifiedTransaction? {
    guard let transactionId, let productId, let purchaseDateMs else { return nil }
    return VerifiedTransaction(
      transactionId: transactionId,
      originalTransactionId: originalTransactionId ?? transactionId,
      bundleId: bundleId,
      productId: productId,
      quantity: quantity ?? 1,
      purchaseDate: purchaseDateMs,
      expiresDate: expiresDateMs,
      revocationDate: cancellationDateMs,
      revocationReason: cancellationReason,
      appAccountToken: appAccountToken?.lowercased(),
      environment: environment,
      type: nil,
      webOrderLineItemId: webOrderLineItemId,
      isFamilyShared: inAppOwnershipType == InAppOwnershipType.familyShared.rawValue
    )
  }
}
