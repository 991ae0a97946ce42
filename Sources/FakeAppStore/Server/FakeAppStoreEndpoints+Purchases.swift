import AppStore
import Foundation
import HTTP

extension FakeAppStoreEndpoints {
  static let defaultSubscriptionSeconds: Int64 = 30 * 86_400
  static let purchaseEnvironments = ["Production", "Sandbox", "Xcode"]

  /// `POST /fake/v1/purchases`: a purchase as StoreKit would report it, with its signed
  /// transaction and the account's app receipt.
  func purchase(_ request: Request) throws -> Response {
    let body = try FakeJSON.decode(FakePurchaseRequest.self, from: request)
    guard !body.bundleId.isEmpty else { throw FakeJSON.invalid("bundle_id", "must not be empty") }
    guard !body.productId.isEmpty else {
      throw FakeJSON.invalid("product_id", "must not be empty")
    }
    guard let type = TransactionType(rawValue: body.type) else {
      throw FakeJSON.invalid(
        "type", "must be one of " + TransactionType.allCases.map(\.rawValue).joined(separator: ", ")
      )
    }
    guard Self.purchaseEnvironments.contains(body.environment) else {
      throw FakeJSON.invalid("environment", "must be Production, Sandbox or Xcode")
    }
    let quantity = body.quantity ?? 1
    guard (1...10).contains(quantity), quantity == 1 || type == .consumable else {
      throw FakeJSON.invalid("quantity", "must be 1 (1 to 10 for consumables)")
    }
    var token: String?
    if let text = body.appAccountToken {
      guard let uuid = UUID(uuidString: text) else {
        throw FakeJSON.invalid("app_account_token", "must be a UUID")
      }
      token = uuid.uuidString.lowercased()
    }
    guard let style = FakeReceiptStyle(rawValue: body.receiptStyle ?? "app") else {
      throw FakeJSON.invalid("receipt_style", "must be app or transaction")
    }
    guard let ownership = InAppOwnershipType(rawValue: body.inAppOwnershipType ?? "PURCHASED")
    else { throw FakeJSON.invalid("in_app_ownership_type", "must be PURCHASED or FAMILY_SHARED") }
    let storefront = body.storefront ?? "USA"
    guard storefront.utf8.count == 3, storefront.utf8.allSatisfy({ (65...90).contains($0) }) else {
      throw FakeJSON.invalid("storefront", "must be an ISO 3166-1 alpha-3 country such as DEU")
    }
    let price = body.price ?? 6000
    guard price >= 0 else { throw FakeJSON.invalid("price", "must not be negative") }
    let now = Self.now()
    let purchaseDate = body.purchaseDateMs ?? now
    let expires =
      body.expiresInSeconds.map { now + $0 * 1000 } ?? purchaseDate + Self
      .defaultSubscriptionSeconds
      * 1000
    let account = body.appleAccount.flatMap { $0.isEmpty ? nil : $0 } ?? FakeAccounts.freshName()
    let (transaction, receipt) = store.purchase(
      FakePurchase(
        appleAccount: account, bundleId: body.bundleId, productId: body.productId, type: type,
        quantity: quantity, appAccountToken: token, environment: body.environment,
        purchaseDate: purchaseDate, expiresDate: expires, price: price,
        currency: body.currency ?? "USD",
        subscriptionGroupIdentifier: body.subscriptionGroupIdentifier ?? "21000001",
        receiptStyle: style, ownership: ownership, storefront: storefront))
    let signed = try authority.sign(transaction.payload(signedDate: now))
    logger.info(
      "purchase",
      [
        "transaction_id": .string(transaction.transactionId),
        "product_id": .string(transaction.productId),
        "environment": .string(transaction.environment), "apple_account": .string(account),
      ])
    return try FakeJSON.response(
      FakeTransactionResponse(
        transaction, receipt: receipt, appReceipt: try appReceiptBase64(receipt.id),
        signedTransaction: signed), status: 201)
  }

  /// `GET /fake/v1/transactions/{transaction_id}`: the transaction as it stands now, signed
  /// afresh (a StoreKit 1 restore signed as its purchase, which is all StoreKit 2 shows), with
  /// its account's current receipt.
  func transaction(_ id: String) throws -> Response {
    guard let transaction = store.transaction(id),
      let receipt = store.receipt(transaction.receiptId)
    else { throw Self.transactionNotFound(id) }
    let purchase =
      transaction.isRestore
      ? store.transaction(transaction.originalTransactionId) ?? transaction : transaction
    let signed = try authority.sign(purchase.payload(signedDate: Self.now()))
    return try FakeJSON.response(
      FakeTransactionResponse(
        transaction, receipt: receipt, appReceipt: try appReceiptBase64(receipt.id),
        signedTransaction: signed))
  }

  /// The account's app receipt as it stands now: a PKCS#7 container listing its transactions.
  func appReceiptBase64(_ receiptId: String) throws -> String {
    guard let snapshot = store.snapshot(receiptId: receiptId) else {
      throw HTTPError(404, code: "receipt_not_found", detail: "No receipt \(receiptId).")
    }
    return try receiptContainers.base64(
      snapshot.receipt, transactions: snapshot.transactions, authority: authority)
  }
}
