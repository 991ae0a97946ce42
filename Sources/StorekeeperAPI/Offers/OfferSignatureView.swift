import AppStore

/// A promotional offer's signature as the API spells it.
struct OfferSignatureView: Encodable, Sendable {
  var keyIdentifier: String
  var nonce: String
  var timestamp: Int64
  var signature: String
  var appAccountToken: String?

  enum CodingKeys: String, CodingKey {
    case keyIdentifier = "key_identifier"
    case nonce, timestamp, signature
    case appAccountToken = "app_account_token"
  }

  init(_ signature: PromotionalOfferSignature) {
    keyIdentifier = signature.keyIdentifier
    nonce = signature.nonce
    timestamp = signature.timestamp
    self.signature = signature.signature
    appAccountToken = signature.appAccountToken
  }
}
