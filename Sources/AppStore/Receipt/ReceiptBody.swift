/// verifyReceipt's `receipt`, which Apple shapes after what the client sent.
///
/// - The app receipt (`Bundle.main.appStoreReceiptURL`, iOS 7 on): the receipt names the app in
///   `bundle_id` and lists its purchases in `in_app[]`.
/// - The iOS 6-style transaction receipt (`SKPaymentTransaction.transactionReceipt`, which
///   seeds 000–002 post): the receipt *is* the one transaction — `product_id`,
///   `transaction_id`, `purchase_date_ms`, … at the top level — and names the app in `bid`
///   (`bvrs` its version, `item_id` the product's Apple id, `unique_identifier` the device);
///   there is no `bundle_id` and no `in_app`.
enum ReceiptBody: Decodable, Sendable {
  case app(bundleId: String?, inApp: [VerifyReceiptResponse.InApp])
  case transaction(bid: String?, VerifyReceiptResponse.InApp)

  var format: ReceiptFormat {
    switch self {
    case .app: .app
    case .transaction: .transaction
    }
  }

  /// The app the receipt belongs to, whichever field names it.
  var bundleId: String? {
    switch self {
    case .app(let bundleId, _): bundleId
    case .transaction(let bid, _): bid
    }
  }

  var transactions: [VerifyReceiptResponse.InApp] {
    switch self {
    case .app(_, let inApp): inApp
    case .transaction(_, let transaction): [transaction]
    }
  }

  private enum CodingKeys: String, CodingKey {
    case bundleId = "bundle_id"
    case inApp = "in_app"
    case bid
    case transactionId = "transaction_id"
  }

  init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: CodingKeys.self)
    func text(_ key: CodingKeys) -> String? {
      container.lenient(key, as: FlexibleString.self)?.value.nonEmpty
    }
    // Only the transaction format has `bid` or a top-level transaction; anything else reads
    // as an app receipt, whose missing bundle id then fails the check that needs it.
    let isTransaction =
      !container.contains(.bundleId) && !container.contains(.inApp)
      && (container.contains(.bid) || container.contains(.transactionId))
    if isTransaction {
      self = .transaction(bid: text(.bid), try VerifyReceiptResponse.InApp(from: decoder))
    } else {
      self = .app(
        bundleId: text(.bundleId),
        inApp: container.lenient(.inApp, as: [Lossy<VerifyReceiptResponse.InApp>].self)?.compactMap(
          \.value) ?? [])
    }
  }
}
