/// Which receipt belongs to which Apple account: one per (account, app, environment).
struct FakeAccounts: Sendable {
  private struct Key: Hashable {
    var appleAccount: String
    var bundleId: String
    var environment: String
  }

  private var receipts: [Key: String] = [:]

  func receiptId(appleAccount: String, bundleId: String, environment: String) -> String? {
    receipts[Key(appleAccount: appleAccount, bundleId: bundleId, environment: environment)]
  }

  mutating func assign(
    _ receiptId: String, appleAccount: String, bundleId: String, environment: String
  ) {
    receipts[Key(appleAccount: appleAccount, bundleId: bundleId, environment: environment)] =
      receiptId
  }

  /// An account name for a purchase that did not say whose it is.
  static func freshName() -> String {
    var generator = SystemRandomNumberGenerator()
    return "account-" + String(generator.next() as UInt64, radix: 36)
  }
}
