/// Why an admin cannot move a purchase to another user.
package enum TransferRefusal: Error, Equatable, Sendable {
  case transactionNotFound(String)
  case alreadyOwned
  /// Refunded, revoked, or its order no longer paid.
  case notTransferable(String)

  package var code: String {
    switch self {
    case .transactionNotFound: "transaction_not_found"
    case .alreadyOwned: "already_owned"
    case .notTransferable: "not_transferable"
    }
  }

  package var detail: String {
    switch self {
    case .transactionNotFound(let id):
      "no purchase \(id) is recorded (an App Store transaction id, or the Google Play order id a paid order shows)"
    case .alreadyOwned: "the purchase already belongs to that user"
    case .notTransferable(let why): "the purchase cannot be moved: \(why)"
    }
  }
}
