/// The parts of Apple's verifyReceipt answer the server uses. Unknown keys are ignored and a
/// field of an unexpected shape reads as absent.
struct VerifyReceiptResponse: Decodable, Sendable {
  var status: Int?
  var environment: String?
  var receipt: Receipt?
  var latestReceiptInfo: [InApp]?
  var latestReceipt: String?
  /// Apple has spelled it both `is-retryable` and `is_retryable`.
  var isRetryable: Bool?

  struct Receipt: Decodable, Sendable {
    var bundleId: String?
    var inApp: [InApp]?

    private enum CodingKeys: String, CodingKey {
      case bundleId = "bundle_id"
      case inApp = "in_app"
    }

    init(from decoder: any Decoder) throws {
      let container = try decoder.container(keyedBy: CodingKeys.self)
      bundleId = container.lenient(.bundleId, as: FlexibleString.self)?.value
      inApp = container.lenient(.inApp, as: [Lossy<InApp>].self)?.compactMap(\.value)
    }
  }

  struct InApp: Decodable, Sendable {
    var productId: String?
    var transactionId: String?
    var originalTransactionId: String?
    var purchaseDateMs: Int64?
    var expiresDateMs: Int64?
    var cancellationDateMs: Int64?
    var cancellationReason: Int?
    var quantity: Int?
    var appAccountToken: String?
    var webOrderLineItemId: String?

    private enum CodingKeys: String, CodingKey {
      case productId = "product_id"
      case transactionId = "transaction_id"
      case originalTransactionId = "original_transaction_id"
      case purchaseDateMs = "purchase_date_ms"
      case expiresDateMs = "expires_date_ms"
      case cancellationDateMs = "cancellation_date_ms"
      case cancellationReason = "cancellation_reason"
      case quantity
      case appAccountToken = "app_account_token"
      case webOrderLineItemId = "web_order_line_item_id"
    }

    init(from decoder: any Decoder) throws {
      let container = try decoder.container(keyedBy: CodingKeys.self)
      func text(_ key: CodingKeys) -> String? {
        container.lenient(key, as: FlexibleString.self)?.value.nonEmpty
      }
      productId = text(.productId)
      transactionId = text(.transactionId)
      originalTransactionId = text(.originalTransactionId)
      purchaseDateMs = text(.purchaseDateMs).flatMap { Int64($0) }
      expiresDateMs = text(.expiresDateMs).flatMap { Int64($0) }
      cancellationDateMs = text(.cancellationDateMs).flatMap { Int64($0) }
      cancellationReason = text(.cancellationReason).flatMap { Int($0) }
      quantity = text(.quantity).flatMap { Int($0) }
      appAccountToken = text(.appAccountToken)
      webOrderLineItemId = text(.webOrderLineItemId)
    }
  }

  private enum CodingKeys: String, CodingKey {
    case status, environment, receipt
    case latestReceiptInfo = "latest_receipt_info"
    case latestReceipt = "latest_receipt"
    case isRetryableDash = "is-retryable"
    case isRetryableUnderscore = "is_retryable"
  }

  init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: CodingKeys.self)
    status = container.lenient(.status, as: FlexibleString.self).flatMap { Int($0.value) }
    environment = container.lenient(.environment, as: FlexibleString.self)?.value
    receipt = container.lenient(.receipt)
    latestReceiptInfo = container.lenient(.latestReceiptInfo, as: [Lossy<InApp>].self)?.compactMap(
      \.value)
    latestReceipt = container.lenient(.latestReceipt, as: FlexibleString.self)?.value
    isRetryable =
      container.lenient(.isRetryableDash, as: FlexibleString.self)?.bool
      ?? container.lenient(.isRetryableUnderscore, as: FlexibleString.self)?.bool
  }
}

/// One array element that may fail to decode without failing the array.
struct Lossy<Element: Decodable & Sendable>: Decodable, Sendable {
  var value: Element?

  init(from decoder: any Decoder) throws {
    value = try? Element(from: decoder)
  }
}

extension String {
  fileprivate var nonEmpty: String? { isEmpty ? nil : self }
}
