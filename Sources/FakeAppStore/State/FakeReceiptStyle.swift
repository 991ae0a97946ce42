/// Which receipt a client of this purchase posts: the app receipt of iOS 7 and later
/// (`appStoreReceiptURL`), or the iOS 6-style `SKPaymentTransaction.transactionReceipt` that
/// seeds 000–002 post. verifyReceipt answers each in its own shape.
enum FakeReceiptStyle: String, Sendable, CaseIterable {
  case app
  case transaction
}
