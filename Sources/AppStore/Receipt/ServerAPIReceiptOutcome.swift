/// What `ServerAPIReceiptVerifier` made of a receipt.
public enum ServerAPIReceiptOutcome: Sendable, Equatable {
  /// An app receipt, judged with Apple's signed answers.
  case judged(VerificationResult<VerifiedReceipt>)
  /// Base64, but no PKCS#7 app receipt (an iOS 6-style transaction receipt, or garbage): the
  /// Server API cannot judge it; only verifyReceipt can.
  case notAppReceipt
}
