extension VerifyReceiptResponse {
  /// One transaction: an element of `in_app` / `latest_receipt_info`, or, in the iOS 6 format,
  /// the whole `receipt` (and its single-object `latest_receipt_info`).
  struct InApp: Decodable, Sendable {
    var productId: String?
    var transactionId: String?
    var originalTransactionId: String?
    var purchaseDateMs: Int64?
    var originalPurchaseDateMs: Int64?
    var expiresDateMs: Int64?
    var cancellationDateMs: Int64?
    var cancellationReason: Int?
    var quantity: Int?
    var appAccountToken: String?
    var webOrderLineItemId: String?
    var inAppOwnershipType: String?

    private enum CodingKeys: String, CodingKey {
      case productId = "product_id"
      case transactionId = "transaction_id"
      case originalTransactionId = "original_transaction_id"
      case purchaseDateMs = "purchase_date_ms"
      case originalPurchaseDateMs = "original_purchase_date_ms"
      case expiresDateMs = "expires_date_ms"
      case expiresDate = "expires_date"
      case cancellationDateMs = "cancellation_date_ms"
      case cancellationDate = "cancellation_date"
      case cancellationReason = "cancellation_reason"
      case quantity
      case appAccountToken = "app_account_token"
      case webOrderLineItemId = "web_order_line_item_id"
      case inAppOwnershipType = "in_app_ownership_type"
    }

    init(from decoder: any Decoder) throws {
      let container = try decoder.container(keyedBy: CodingKeys.self)
      func text(_ key: CodingKeys) -> String? {
        container.lenient(key, as: FlexibleString.self)?.value.nonEmpty
      }
      func milliseconds(_ key: CodingKeys) -> Int64? { text(key).flatMap { Int64($0) } }
      productId = text(.productId)
      transactionId = text(.transactionId)
      originalTransactionId = text(.originalTransactionId)
      purchaseDateMs = milliseconds(.purchaseDateMs)
      originalPurchaseDateMs = milliseconds(.originalPurchaseDateMs)
      // The app receipt spells `expires_date` as a date ("2023-11-14 22:13:20 Etc/GMT") next to
      // `expires_date_ms`; the iOS 6 format spells `expires_date` in milliseconds and has no
      // `_ms` twin. A date spelled as text is not a whole number, so it never reads as one.
      expiresDateMs = milliseconds(.expiresDateMs) ?? milliseconds(.expiresDate)
      cancellationDateMs = milliseconds(.cancellationDateMs) ?? milliseconds(.cancellationDate)
      cancellationReason = text(.cancellationReason).flatMap { Int($0) }
      quantity = text(.quantity).flatMap { Int($0) }
      appAccountToken = text(.appAccountToken)
      webOrderLineItemId = text(.webOrderLineItemId)
      inAppOwnershipType = text(.inAppOwnershipType)
    }
  }
}
