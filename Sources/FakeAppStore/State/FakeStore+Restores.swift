// StoreKit 1's `restoreCompletedTransactions` delivers, for each restorable purchase, a new
// transaction with an id of its own whose original transaction is the purchase (Apple's
// `SKPaymentTransaction.original`; the receipt fields `transaction_id` and
// `original_transaction_id`). Apple restores non-consumables and auto-renewable subscriptions,
// never consumables or non-renewing subscriptions; a restored subscription is not modelled.
extension FakeStore {
  /// Records a StoreKit 1 restore of the non-consumable `id` (or of the purchase a restore
  /// `id` restored) at `date` in its account's receipt, and returns it with the receipt and
  /// the purchase it restores.
  func restore(_ id: String, at date: Int64) throws(FakeStoreError)
    -> (restore: FakeTransaction, original: FakeTransaction, receipt: FakeReceipt)
  {
    try contents.withLock { contents throws(FakeStoreError) in
      guard let named = contents.transactions[id],
        let original = contents.transactions[named.originalTransactionId]
      else { throw .unknownTransaction(id) }
      guard original.type == .nonConsumable, var receipt = contents.receipts[original.receiptId]
      else { throw .notRestorable(id) }
      let newId = contents.identifiers.nextTransactionId()
      var restore = original
      restore.transactionId = newId
      restore.purchaseDate = date
      restore.isRestore = true
      receipt.reissue(adding: newId)
      contents.transactions[newId] = restore
      contents.receipts[receipt.id] = receipt
      return (restore, original, receipt)
    }
  }

  /// The purchase a transaction is: a restore's original, else the transaction itself.
  static func purchase(of id: String, in contents: Contents) -> String {
    guard let transaction = contents.transactions[id], transaction.isRestore else { return id }
    return transaction.originalTransactionId
  }
}
