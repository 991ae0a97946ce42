/// What a posted receipt is once its signature has been looked at, before anyone is asked.
public enum AppReceiptCheck: Sendable, Equatable {
  /// Apple signed it, for this app: its transactions are candidates to ask Apple about.
  case signed(SignedAppReceipt)
  /// A PKCS#7 container that is no app receipt of this app: unsigned, signed by a key that
  /// does not chain to Apple's root at the receipt's creation date, altered after signing,
  /// another app's, or unreadable. Nothing in it is believed or sent anywhere.
  case refused(RefusalReason)
  /// Base64 that is no PKCS#7 at all, such as an iOS 6-style transaction receipt: only
  /// verifyReceipt can judge it.
  case notAppReceipt
}
