import Postgres

/// What a client sends as proof of payment: a StoreKit 1 receipt (base64, verified through
/// Apple's verifyReceipt) or a StoreKit 2 signed transaction (JWS, verified offline).
package enum Proof: Sendable, Equatable {
  case receipt(String)
  case signedTransaction(String)

  enum Kind: String, Sendable, PostgresEnum {
    case receipt
    case signedTransaction = "signed_transaction"
  }

  package static let maxReceiptCharacters = 1_000_000
  package static let maxSignedTransactionCharacters = 64 * 1024

  init(kind: Kind, text: String) {
    switch kind {
    case .receipt: self = .receipt(text)
    case .signedTransaction: self = .signedTransaction(text)
    }
  }

  var kind: Kind {
    switch self {
    case .receipt: .receipt
    case .signedTransaction: .signedTransaction
    }
  }

  var text: String {
    switch self {
    case .receipt(let text), .signedTransaction(let text): text
    }
  }

  /// Its size in bytes, as kept on a report whose proof itself is not.
  var size: Int32 { Int32(clamping: text.utf8.count) }

  /// The request field that carried it.
  var field: String { kind.rawValue }

  /// Verified without asking Apple, so nothing needs storing before it is checked.
  var isOffline: Bool { kind == .signedTransaction }
}
