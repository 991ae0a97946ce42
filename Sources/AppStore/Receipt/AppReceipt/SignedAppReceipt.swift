/// An app receipt whose PKCS#7 signature chains to Apple's root, made only by
/// `AppReceiptSignatureVerifier` (its initialiser is not public), so a path that asks Apple
/// about a receipt's transactions cannot be handed contents nobody checked.
public struct SignedAppReceipt: Sendable, Equatable {
  public let contents: AppReceiptContents
  /// The leaf that signed it, as its subject's common name says (for logs and `verify`).
  public let signer: String

  init(contents: AppReceiptContents, signer: String) {
    self.contents = contents
    self.signer = signer
  }
}
