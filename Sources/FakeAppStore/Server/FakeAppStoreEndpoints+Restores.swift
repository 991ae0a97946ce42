import HTTP

extension FakeAppStoreEndpoints {
  /// `POST /fake/v1/restores`: a StoreKit 1 restore of a non-consumable purchase, as
  /// `restoreCompletedTransactions` delivers it: a new transaction id, the purchase's original
  /// transaction id and original purchase date, its own purchase date, added to the account's
  /// app receipt. The answer is the restore, with its own transaction receipt; its
  /// `signed_transaction` is the purchase's, as StoreKit 2 sees a restored purchase.
  func restore(_ request: Request) throws -> Response {
    let body = try FakeJSON.decode(FakeRestoreRequest.self, from: request)
    let restored: (restore: FakeTransaction, original: FakeTransaction, receipt: FakeReceipt)
    do {
      restored = try store.restore(body.transactionId, at: body.purchaseDateMs ?? Self.now())
    } catch { throw Self.httpError(error) }
    let signed = try authority.sign(restored.original.payload(signedDate: Self.now()))
    logger.info(
      "restore",
      [
        "transaction_id": .string(restored.restore.transactionId),
        "original_transaction_id": .string(restored.original.transactionId),
      ])
    return try FakeJSON.response(
      FakeTransactionResponse(
        restored.restore, receipt: restored.receipt,
        appReceipt: try appReceiptBase64(restored.receipt.id), signedTransaction: signed),
      status: 201)
  }
}
