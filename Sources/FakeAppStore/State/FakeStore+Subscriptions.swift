extension FakeStore {
  /// The subscription `transactionId` belongs to and its latest transaction, after `change`
  /// (which may edit both) has been applied.
  func updateSubscription(
    of transactionId: String,
    _ change: (inout FakeSubscription, inout FakeTransaction) -> Void = { _, _ in }
  ) throws(FakeStoreError) -> (subscription: FakeSubscription, latest: FakeTransaction) {
    try contents.withLock { contents throws(FakeStoreError) in
      var (subscription, latest) = try Self.subscription(of: transactionId, in: contents)
      change(&subscription, &latest)
      contents.subscriptions[subscription.originalTransactionId] = subscription
      contents.transactions[latest.transactionId] = latest
      return (subscription, latest)
    }
  }

  /// A new period of the subscription `transactionId` belongs to: a new transaction id, the
  /// same original transaction id, in the same receipt. Renewing also ends any billing
  /// trouble and turns auto-renew back on (a resubscribe or offer does the same). A `change`
  /// of product is an upgrade or crossgrade: the period it replaces is marked upgraded.
  func renew(
    _ transactionId: String, purchaseDate: Int64, expiresDate: Int64, reason: String,
    change: (productId: String, price: Int64?, appAccountToken: String?)? = nil
  ) throws(FakeStoreError) -> (subscription: FakeSubscription, latest: FakeTransaction) {
    try contents.withLock { contents throws(FakeStoreError) in
      var (subscription, renewal) = try Self.subscription(of: transactionId, in: contents)
      if let change, change.productId != renewal.productId {
        contents.transactions[renewal.transactionId]?.isUpgraded = true
        renewal.productId = change.productId
        subscription.productId = change.productId
        renewal.price = change.price ?? renewal.price
        renewal.appAccountToken = change.appAccountToken ?? renewal.appAccountToken
      }
      renewal.isUpgraded = false
      renewal.transactionId = contents.identifiers.nextTransactionId()
      renewal.webOrderLineItemId = contents.identifiers.nextWebOrderLineItemId()
      renewal.purchaseDate = purchaseDate
      renewal.expiresDate = expiresDate
      renewal.transactionReason = reason
      renewal.revocationDate = nil
      renewal.revocationReason = nil
      // A renewal's purchase has no quantity choice and no new account token from the app.
      renewal.quantity = 1
      subscription.latestTransactionId = renewal.transactionId
      subscription.autoRenewStatus = 1
      subscription.expirationIntent = nil
      subscription.isInBillingRetryPeriod = false
      subscription.gracePeriodExpiresDate = nil
      contents.transactions[renewal.transactionId] = renewal
      contents.receipts[renewal.receiptId]?.reissue(adding: renewal.transactionId)
      contents.subscriptions[subscription.originalTransactionId] = subscription
      return (subscription, renewal)
    }
  }

  /// The subscription `transactionId` belongs to and its latest transaction; the errors stay
  /// apart because the fake answers an unknown transaction 404, a non-subscription 422.
  private static func subscription(of transactionId: String, in contents: Contents)
    throws(FakeStoreError) -> (FakeSubscription, FakeTransaction)
  {
    guard let transaction = contents.transactions[transactionId] else {
      throw .unknownTransaction(transactionId)
    }
    guard transaction.isAutoRenewable,
      let subscription = contents.subscriptions[transaction.originalTransactionId],
      let latest = contents.transactions[subscription.latestTransactionId]
    else { throw .notAutoRenewable(transactionId) }
    return (subscription, latest)
  }
}
