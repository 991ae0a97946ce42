/// The names of Apple's verifyReceipt request body, which apps written against Apple's endpoint
/// post to their own server unchanged (seeds 001 and 002: `{"receipt-data": …}`).
/// `receipt-data` is a synonym of `receipt`. `password` (the app's shared secret) and
/// `exclude-old-transactions` are accepted and ignored: Apple is asked with this server's own
/// `APPLE_SHARED_SECRET`, never a secret a client sent, and the answer lists every transaction
/// in the proof whatever the client asked to leave out. Refusing them would refuse such an app's
/// every purchase for keys that change nothing.
enum VerifyReceiptFields {
  static let receipt = "receipt-data"
  static let password = "password"
  static let excludeOld = "exclude-old-transactions"
  static let names: Set<String> = [receipt, password, excludeOld]

  /// The name the post gives its receipt. Both names at once is refused, as two proofs are.
  static func receiptField(_ fields: inout RequestFields) -> String {
    guard fields.has(receipt) else { return "receipt" }
    if fields.has("receipt") {
      fields.fail(receipt, "send either receipt or receipt-data, not both")
    }
    return receipt
  }

  /// The ignored keys still hold what Apple's body allows, so a wrong type is an error as
  /// anywhere else: `password` a string, `exclude-old-transactions` a boolean (a form's
  /// `true` or `false` text).
  static func checkIgnored(_ fields: inout RequestFields) {
    _ = fields.string(password, maxLength: 256)
    switch fields.values[excludeOld] {
    case nil, .bool?, .string("true")?, .string("false")?: break
    default: fields.fail(excludeOld, "must be true or false")
    }
  }
}
