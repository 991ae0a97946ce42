/// Numeric identifiers shaped like Apple's (16 digits, starting with 2).
///
/// Each process starts at 2000000000000000 + a random offset below 10^12 (about 40 bits)
/// times 1000, so two fake processes (two test runs against one database) do not hand out the
/// same ids; the first thousands of ids of any process stay below 3000000000000000.
struct FakeIdentifiers: Sendable {
  private let transactionBase: UInt64
  private let lineItemBase: UInt64
  private var counter: UInt64 = 0

  init<Generator: RandomNumberGenerator>(using generator: inout Generator) {
    transactionBase =
      2_000_000_000_000_000 + UInt64.random(in: 0..<999_999_999_999, using: &generator) * 1000
    lineItemBase = 200_000_000_000_000 + UInt64.random(in: 0..<(1 << 36), using: &generator) * 1000
  }

  init() {
    var generator = SystemRandomNumberGenerator()
    self.init(using: &generator)
  }

  mutating func nextTransactionId() -> String {
    counter += 1
    return String(transactionBase + counter)
  }

  /// Apple's `webOrderLineItemId`: one per subscription period.
  mutating func nextWebOrderLineItemId() -> String {
    counter += 1
    return String(lineItemBase + counter)
  }

  /// Apple's `appTransactionId`: one per Apple account's download of an app (18 digits here,
  /// starting with 7, so it is never mistaken for a transaction id).
  mutating func nextAppTransactionId() -> String {
    counter += 1
    return String(700_000_000_000_000_000 + (transactionBase - 2_000_000_000_000_000) + counter)
  }
}
