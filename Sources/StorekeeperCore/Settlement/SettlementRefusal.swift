/// Why a report or receipt does not settle an order: definite answers about the client's
/// request, decided by the domain and recorded on the report. The HTTP edge maps each case to a
/// status and problem `code` (`SettlementRefusal+Problem`); nothing here knows about HTTP.
package enum SettlementRefusal: Error, Equatable, Sendable {
  case orderNotFound(tradeNo: String)
  /// A close report about a paid order, or a proof of another transaction for a paid order.
  case orderAlreadyPaid(tradeNo: String, byAnotherTransaction: Bool)
  case orderRefunded(tradeNo: String)
  /// An admin moved the purchase that paid this order to another order (`close_reason`
  /// `transferred`): not Apple's refund, and no payment reopens it.
  case orderTransferred(tradeNo: String)
  /// The store said the proof is not genuine (`reason` is its verdict); `field` names the proof.
  case invalidProof(reason: String, field: String)
  case transactionRevoked(productId: String)
  case productMismatch(paidFor: [String], ordered: String)
  case accountTokenMismatch
  case transactionAlreadyUsed(transactionId: String?, productId: String)
  case quantityMismatch(charged: Int, ordered: Int32)
  /// A receipt whose purchases are all another user's; who owns them is not said.
  case purchaseNotYours
  /// A proof of one store for an order of the other (a Google purchase token for an App Store
  /// order, or the reverse).
  case storeMismatch(ordered: String)
  /// Google says the purchase was canceled before it was paid.
  case googlePurchaseCanceled
  /// Google does not know this purchase token (404/410) for this product and package.
  case googlePurchaseUnknown

  /// The stable machine code, as problem+json and `trade_reports.outcome_code` spell it.
  package var code: String {
    switch self {
    case .orderNotFound: "order_not_found"
    case .orderAlreadyPaid: "order_already_paid"
    case .orderRefunded: "order_refunded"
    case .orderTransferred: "order_transferred"
    case .invalidProof: "invalid_proof"
    case .transactionRevoked: "transaction_revoked"
    case .productMismatch: "product_mismatch"
    case .accountTokenMismatch: "account_token_mismatch"
    case .transactionAlreadyUsed: "transaction_already_used"
    case .quantityMismatch: "quantity_mismatch"
    case .purchaseNotYours: "purchase_not_yours"
    case .storeMismatch: "store_mismatch"
    case .googlePurchaseCanceled: "purchase_canceled"
    case .googlePurchaseUnknown: "purchase_token_unknown"
    }
  }

  /// What a person reading the answer or the log needs to know.
  package var detail: String {
    switch self {
    case .orderNotFound(let tradeNo): "no order \(tradeNo)"
    case .orderAlreadyPaid(let tradeNo, let another):
      another
        ? "order \(tradeNo) was paid by another transaction"
        : "order \(tradeNo) is paid; a close report changes nothing"
    case .orderRefunded(let tradeNo): "order \(tradeNo) was refunded by the store"
    case .orderTransferred(let tradeNo):
      "order \(tradeNo)'s purchase was moved to another order by an admin"
    case .invalidProof(let reason, _): "the store's proof did not verify: \(reason)"
    case .transactionRevoked(let productId):
      "the store refunded or revoked the purchase of \(productId)"
    case .productMismatch(let paidFor, let ordered):
      "the proof pays for \(paidFor.isEmpty ? "nothing" : paidFor.joined(separator: ", ")), not \(ordered)"
    case .accountTokenMismatch:
      "the purchase carries an account id (the App Store's app_account_token, Google Play's obfuscated account id) other than this order's: another order's, or one this server never issued"
    case .transactionAlreadyUsed(let transactionId?, _):
      "the store's transaction \(transactionId) already settled another order"
    case .transactionAlreadyUsed(nil, let productId):
      "every transaction for \(productId) in this proof already settled another order"
    case .quantityMismatch(let charged, let ordered):
      "the store charged for \(charged), the order is for \(ordered)"
    case .purchaseNotYours: "the purchases in this proof belong to another user"
    case .storeMismatch(let ordered):
      "the order is to be paid in \(ordered == "google_play" ? "Google Play" : "the App Store"); this proof is the other store's"
    case .googlePurchaseCanceled: "Google Play says the purchase was canceled before it was paid"
    case .googlePurchaseUnknown:
      "Google Play does not know this purchase token for this product and package"
    }
  }
}
