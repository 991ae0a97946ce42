import Postgres

/// What a client sends as proof of payment: a StoreKit 1 receipt (base64, verified through
/// Apple's verifyReceipt), a StoreKit 2 signed transaction (JWS, verified offline) or a Google
/// Play purchase token (verified by asking the Google Play Developer API).
package enum Proof: Sendable, Equatable {
  case receipt(String)
  case signedTransaction(String)
  case googlePurchase(String)

  enum Kind: String, Sendable, PostgresEnum {
    case receipt
    case signedTransaction = "signed_transaction"
    case googlePurchase = "google_purchase"
  }

  package static let maxReceiptCharacters = 1_000_000
  package static let maxSignedTransactionCharacters = 64 * 1024
  /// Google's tokens run to a few hundred characters; the API client takes at most this.
  package static let maxPurchaseTokenCharacters = 1024

  init(kind: Kind, text: String) {
    switch kind {
    case .receipt: self = .receipt(text)
    case .signedTransaction: self = .signedTransaction(text)
    case .googlePurchase: self = .googlePurchase(text)
    }
  }

  var kind: Kind {
    switch self {
    case .receipt: .receipt
    case .signedTransaction: .signedTransaction
    case .googlePurchase: .googlePurchase
    }
  }

  var text: String {
    switch self {
    case .receipt(let text), .signedTransaction(let text), .googlePurchase(let text): text
    }
  }

  /// Its size in bytes, as kept on a report whose proof itself is not.
  var size: Int32 { Int32(clamping: text.utf8.count) }

  /// The request field that carried it.
  var field: String { kind == .googlePurchase ? "purchase_token" : kind.rawValue }

  /// Verified without asking Apple, so nothing needs storing before it is checked.
  var isOffline: Bool { kind == .signedTransaction }
}
