import AppStore
import Synchronization

/// Everything the fake App Store remembers: receipts per account, transactions, subscription
/// renewal state. In memory only; one lock, held for map updates and never across I/O.
final class FakeStore: Sendable {
  struct Contents: Sendable {
    var identifiers = FakeIdentifiers()
    var accounts = FakeAccounts()
    var receipts: [String: FakeReceipt] = [:]
    var transactions: [String: FakeTransaction] = [:]
    var subscriptions: [String: FakeSubscription] = [:]
  }

  /// A receipt with its transactions, read under the lock so it is consistent.
  struct ReceiptSnapshot: Sendable {
    var receipt: FakeReceipt
    var transactions: [FakeTransaction]
    var subscriptions: [(subscription: FakeSubscription, latest: FakeTransaction)]
  }

  let contents = Mutex(Contents())

  init() {}

  /// Records a purchase in its account's receipt (made on first use) and returns both.
  func purchase(_ new: FakePurchase) -> (FakeTransaction, FakeReceipt) {
    contents.withLock { contents in
      var receipt =
        contents.accounts.receiptId(
          appleAccount: new.appleAccount, bundleId: new.bundleId, environment: new.environment
        ).flatMap { contents.receipts[$0] }
        ?? FakeReceipt(
          id: FakeReceipt.makeId(), appleAccount: new.appleAccount, bundleId: new.bundleId,
          environment: new.environment,
          appTransactionId: contents.identifiers.nextAppTransactionId(),
          createdAt: new.purchaseDate)
      let id = contents.identifiers.nextTransactionId()
      let subscription = new.type == .autoRenewableSubscription
      var transaction = FakeTransaction(
        transactionId: id, originalTransactionId: id,
        webOrderLineItemId: subscription ? contents.identifiers.nextWebOrderLineItemId() : nil,
        bundleId: new.bundleId, productId: new.productId,
        subscriptionGroupIdentifier: subscription ? new.subscriptionGroupIdentifier : nil,
        type: new.type, quantity: new.quantity, appAccountToken: new.appAccountToken,
        environment: new.environment, purchaseDate: new.purchaseDate,
        originalPurchaseDate: new.purchaseDate, expiresDate: subscription ? new.expiresDate : nil,
        price: new.price, currency: new.currency, transactionReason: "PURCHASE",
        revocationDate: nil, revocationReason: nil, receiptId: receipt.id,
        appTransactionId: receipt.appTransactionId, receiptStyle: new.receiptStyle,
        ownership: new.ownership)
      transaction.storefront = new.storefront
      receipt.reissue(adding: id)
      contents.transactions[id] = transaction
      contents.receipts[receipt.id] = receipt
      contents.accounts.assign(
        receipt.id, appleAccount: new.appleAccount, bundleId: new.bundleId,
        environment: new.environment)
      if subscription {
        contents.subscriptions[id] = FakeSubscription(
          originalTransactionId: id, productId: new.productId, latestTransactionId: id)
      }
      return (transaction, receipt)
    }
  }

  func transaction(_ id: String) -> FakeTransaction? {
    contents.withLock { $0.transactions[id] }
  }

  func receipt(_ id: String) -> FakeReceipt? {
    contents.withLock { $0.receipts[id] }
  }

  func snapshot(receiptId: String) -> ReceiptSnapshot? {
    contents.withLock { contents in
      guard let receipt = contents.receipts[receiptId] else { return nil }
      let transactions = receipt.transactionIds.compactMap { contents.transactions[$0] }
      var seen = Set<String>()
      var subscriptions: [(FakeSubscription, FakeTransaction)] = []
      for transaction in transactions where transaction.isAutoRenewable {
        guard seen.insert(transaction.originalTransactionId).inserted,
          let subscription = contents.subscriptions[transaction.originalTransactionId],
          let latest = contents.transactions[subscription.latestTransactionId]
        else { continue }
        subscriptions.append((subscription, latest))
      }
      return ReceiptSnapshot(
        receipt: receipt, transactions: transactions, subscriptions: subscriptions)
    }
  }

  /// Set App Account Token: every transaction of the purchase `originalTransactionId` (and
  /// so every renewal made after, which copies the latest) carries `token` from now on.
  func setAppAccountToken(_ token: String, originalTransactionId: String) throws(FakeStoreError)
    -> [FakeTransaction]
  {
    try contents.withLock { contents throws(FakeStoreError) in
      guard contents.transactions[originalTransactionId] != nil else {
        throw .unknownTransaction(originalTransactionId)
      }
      var changed: [FakeTransaction] = []
      for (id, var transaction) in contents.transactions
      where transaction.originalTransactionId == originalTransactionId {
        transaction.appAccountToken = token
        contents.transactions[id] = transaction
        changed.append(transaction)
      }
      return changed
    }
  }

  /// Sets (refund, revoke) or clears (refund reversed) a transaction's revocation. Apple
  /// refunds a purchase, not a restore of it: a restore named is its original, and every
  /// restore of a purchase shows the purchase's revocation (a receipt's `cancellation_date`).
  /// Answers the purchase.
  func setRevocation(
    of id: String, date: Int64?, reason: Int32?, type: String? = nil, percentage: Int32? = nil
  ) throws(FakeStoreError) -> FakeTransaction {
    try contents.withLock { contents throws(FakeStoreError) in
      let purchaseId = Self.purchase(of: id, in: contents)
      guard let purchase = contents.transactions[purchaseId] else {
        throw .unknownTransaction(id)
      }
      let restores = contents.transactions.values.filter {
        $0.isRestore && $0.originalTransactionId == purchaseId
      }
      for var transaction in [purchase] + restores {
        transaction.revocationDate = date
        transaction.revocationReason = date == nil ? nil : reason
        transaction.revocationType = date == nil ? nil : type
        transaction.revocationPercentage = date == nil ? nil : percentage
        contents.transactions[transaction.transactionId] = transaction
      }
      return contents.transactions[purchaseId] ?? purchase
    }
  }
}
