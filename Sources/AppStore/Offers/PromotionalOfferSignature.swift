/// What StoreKit needs to redeem a subscription's promotional offer
/// (`Product.PurchaseOption.promotionalOffer(offerID:keyID:nonce:signature:timestamp:)`), the
/// app passing each value as given here.
public struct PromotionalOfferSignature: Sendable, Equatable {
  /// The in-app purchase key's id, as App Store Connect shows it.
  public var keyIdentifier: String
  /// A lowercase UUID, fresh for each signature.
  public var nonce: String
  /// Milliseconds since 1970; Apple refuses signatures much older than a day.
  public var timestamp: Int64
  /// Base64 of the DER ECDSA P-256 SHA-256 signature over `PromotionalOfferSigner.payload`.
  public var signature: String
  /// The lowercase UUID signed in, which the purchase must carry as `appAccountToken`; nil:
  /// none was signed, and the purchase must carry none.
  public var appAccountToken: String?
}
