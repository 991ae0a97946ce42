extension VerifyReceiptResponse {
  /// The receipt's transactions (`in_app`, or the transaction receipt itself) ∪
  /// `latest_receipt_info` ∪ `latest_expired_receipt_info` as normalized transactions,
  /// deduplicated by transaction id; the latest info wins because it carries later facts
  /// (renewals, cancellations). A StoreKit 1 restore is its purchase (`InApp.restores`), so a
  /// receipt listing the purchase and its restores yields it once, refunded if any entry says
  /// so. Entries without a transaction id, product id or purchase date are dropped.
  func transactions(bundleId: String, environment: String) -> [VerifiedTransaction] {
    var order: [String] = []
    var byId: [String: VerifiedTransaction] = [:]
    var purchasesRestored: Set<String> = []
    let entries =
      (receipt?.transactions ?? []) + (latestReceiptInfo ?? []) + (latestExpiredReceiptInfo ?? [])
    for entry in entries {
      guard
        var transaction = entry.verifiedTransaction(bundleId: bundleId, environment: environment)
      else {
        continue
      }
      let id = transaction.transactionId
      if entry.restores { purchasesRestored.insert(id) }
      // Apple refunds the purchase, and each of its entries may or may not show it yet.
      if purchasesRestored.contains(id), transaction.revocationDate == nil,
        let earlier = byId[id], earlier.revocationDate != nil
      {
        transaction.revocationDate = earlier.revocationDate
        transaction.revocationReason = earlier.revocationReason
      }
      if byId.updateValue(transaction, forKey: id) == nil {
        order.append(id)
      }
    }
    return order.compactMap { byId[$0] }
  }
}

extension VerifyReceiptResponse.InApp {
  /// A StoreKit 1 restore (`restoreCompletedTransactions`) of a one-time purchase: a
  /// transaction id of its own and the purchase's as `original_transaction_id` (Apple's
  /// receipt fields `transaction_id` and `original_transaction_id`). Only an auto-renewable
  /// subscription's periods carry `expires_date` and `web_order_line_item_id`; those share
  /// an original transaction as renewals, each a purchase of its own.
  var restores: Bool {
    guard let transactionId, let originalTransactionId else { return false }
    return transactionId != originalTransactionId && expiresDateMs == nil
      && webOrderLineItemId == nil
  }

  /// A restore is read as the purchase it restores: its original transaction id and original
  /// purchase date. Apple charged once, StoreKit 2 and the App Store Server API know only the
  /// purchase, and a refund names the purchase; taken as a transaction of its own, every
  /// restore would be a new purchase (a new order, the grants again, more revenue).
  func verifiedTransaction(bundleId: String, environment: String) -> VerifiedTransaction? {
    guard var transactionId, let productId, var purchaseDateMs else { return nil }
    if restores, let originalTransactionId {
      transactionId = originalTransactionId
      purchaseDateMs = originalPurchaseDateMs ?? purchaseDateMs
    }
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
