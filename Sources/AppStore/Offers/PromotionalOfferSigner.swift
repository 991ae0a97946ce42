import Foundation

/// Signs subscription promotional offers as Apple documents ("Generating a signature for
/// promotional offers"): ECDSA P-256 SHA-256 with an in-app purchase key over the app's bundle
/// id, the key id, the product, the offer, the app account token, a nonce and a timestamp,
/// joined by U+2063 (INVISIBLE SEPARATOR). No HTTP: the caller supplies the nonce and the time,
/// so tests can sign what they choose.
public struct PromotionalOfferSigner: Sendable {
  /// Apple's separator between the payload's fields.
  public static let separator = "\u{2063}"

  let key: P256PrivateKey
  public let keyId: String
  public let bundleId: String

  public init(key: P256PrivateKey, keyId: String, bundleId: String) {
    self.key = key
    self.keyId = keyId
    self.bundleId = bundleId
  }

  /// The exact bytes Apple verifies. UUIDs are lowercased, as Apple requires; an absent app
  /// account token is the empty string.
  public func payload(
    productId: String, offerId: String, appAccountToken: String?, nonce: String, timestamp: Int64
  ) -> [UInt8] {
    let fields = [
      bundleId, keyId, productId, offerId, appAccountToken?.lowercased() ?? "", nonce.lowercased(),
      String(timestamp),
    ]
    return Array(fields.joined(separator: Self.separator).utf8)
  }

  /// The signature with its inputs as StoreKit takes them; nil if OpenSSL fails.
  public func sign(
    productId: String, offerId: String, appAccountToken: String?, nonce: String, timestamp: Int64
  ) -> PromotionalOfferSignature? {
    let message = payload(
      productId: productId, offerId: offerId, appAccountToken: appAccountToken, nonce: nonce,
      timestamp: timestamp)
    guard let der = key.signDER(message) else { return nil }
    return PromotionalOfferSignature(
      keyIdentifier: keyId, nonce: nonce.lowercased(), timestamp: timestamp,
      signature: Data(der).base64EncodedString(), appAccountToken: appAccountToken?.lowercased())
  }
}
