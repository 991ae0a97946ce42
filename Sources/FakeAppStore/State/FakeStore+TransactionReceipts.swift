extension FakeStore {
  /// What verifyReceipt needs to answer a transaction receipt, read under one lock.
  struct TransactionSnapshot: Sendable {
    var transaction: FakeTransaction
    var appleAccount: String
    var subscription: (subscription: FakeSubscription, latest: FakeTransaction)?
  }

  func transactionSnapshot(_ id: String) -> TransactionSnapshot? {
    contents.withLock { contents in
      guard let transaction = contents.transactions[id],
        let receipt = contents.receipts[transaction.receiptId]
      else { return nil }
      var snapshot = TransactionSnapshot(
        transaction: transaction, appleAccount: receipt.appleAccount, subscription: nil)
      if transaction.isAutoRenewable,
        let subscription = contents.subscriptions[transaction.originalTransactionId],
        let latest = contents.transactions[subscription.latestTransactionId]
      {
        snapshot.subscription = (subscription, latest)
      }
      return snapshot
    }
  }
}
