/// One attempt to deliver a notification, shaped like Apple's `sendAttemptItem` (plus the
/// receiver's status, which Apple keeps to itself).
struct FakeSendAttempt: Sendable, Encodable {
  /// Milliseconds since 1970.
  var attemptDate: Int64
  var sendAttemptResult: FakeSendAttemptResult
  var status: Int?
}
