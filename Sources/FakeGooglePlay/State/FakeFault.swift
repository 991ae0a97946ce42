/// A failure the next API (or token) requests get, set with `POST /fake/v1/faults`.
struct FakeFault: Sendable {
  /// `orders` hits `orders.get` only, so a test can fail the price lookup and nothing else;
  /// `subscriptions` hits `subscriptionsv2.get` only (the voided list still answers);
  /// `writes` hits acknowledgements and consumptions only, so a purchase reads as it is while
  /// its acknowledgement stays owed (a background job's read cannot use up a count meant for
  /// the reads a test makes).
  enum Target: String, Sendable {
    case api, token, orders, subscriptions, writes
  }

  var target: Target
  /// The status to answer; 0 answers normally after `delayMillis` (a slow Google).
  var status: Int
  /// Requests left to fail; nil until cleared.
  var remaining: Int?
  var retryAfterSeconds: Int?
  var delayMillis: Int
}
