/// The parts of Apple's verifyReceipt answer the server uses, in both of Apple's receipt
/// formats (see `ReceiptBody`). Unknown keys are ignored and a field of an unexpected shape
/// reads as absent.
struct VerifyReceiptResponse: Decodable, Sendable {
  var status: Int?
  var environment: String?
  var receipt: ReceiptBody?
  /// An array for app receipts; a single object for iOS 6-style transaction receipts.
  var latestReceiptInfo: [InApp]?
  /// Transaction receipts of an expired subscription (status 21006) carry this instead.
  var latestExpiredReceiptInfo: [InApp]?
  var latestReceipt: String?
  var pendingRenewalInfo: [PendingRenewal]?
  /// Apple has spelled it both `is-retryable` and `is_retryable`.
  var isRetryable: Bool?

  private enum CodingKeys: String, CodingKey {
    case status, environment, receipt
    case latestReceiptInfo = "latest_receipt_info"
    case latestExpiredReceiptInfo = "latest_expired_receipt_info"
    case latestReceipt = "latest_receipt"
    case pendingRenewalInfo = "pending_renewal_info"
    case isRetryableDash = "is-retryable"
    case isRetryableUnderscore = "is_retryable"
  }

  init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: CodingKeys.self)
    status = container.lenient(.status, as: FlexibleString.self).flatMap { Int($0.value) }
    environment = container.lenient(.environment, as: FlexibleString.self)?.value
    receipt = container.lenient(.receipt)
    latestReceiptInfo = container.lenient(.latestReceiptInfo, as: OneOrMany<InApp>.self)?.values
    latestExpiredReceiptInfo =
      container.lenient(.latestExpiredReceiptInfo, as: OneOrMany<InApp>.self)?.values
    latestReceipt = container.lenient(.latestReceipt, as: FlexibleString.self)?.value
    pendingRenewalInfo =
      container.lenient(.pendingRenewalInfo, as: OneOrMany<PendingRenewal>.self)?.values
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
  var nonEmpty: String? { isEmpty ? nil : self }
}
