extension FakeStore {
  /// Every subscription of the customer who owns `transactionId` (the same Apple account's
  /// receipt for the same app), each with its latest transaction: what Get All Subscription
  /// Statuses reports. Nil when the transaction is unknown or not a subscription.
  func subscriptionsOfOwner(of transactionId: String) -> (
    bundleId: String, environment: String,
    subscriptions: [(subscription: FakeSubscription, latest: FakeTransaction)]
  )? {
    contents.withLock { contents in
      guard let transaction = contents.transactions[transactionId], transaction.isAutoRenewable,
        let receipt = contents.receipts[transaction.receiptId]
      else { return nil }
      var seen = Set<String>()
      var found: [(FakeSubscription, FakeTransaction)] = []
      for id in receipt.transactionIds {
        guard let member = contents.transactions[id], member.isAutoRenewable,
          seen.insert(member.originalTransactionId).inserted,
          let subscription = contents.subscriptions[member.originalTransactionId],
          let latest = contents.transactions[subscription.latestTransactionId]
        else { continue }
        found.append((subscription, latest))
      }
      return (transaction.bundleId, transaction.environment, found)
    }
  }
}
