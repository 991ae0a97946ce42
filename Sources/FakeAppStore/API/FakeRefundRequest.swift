/// `POST /fake/v1/refunds`.
struct FakeRefundRequest: Decodable, Sendable {
  var transactionId: String
  /// "REFUND" (default), "REVOKE" or "REFUND_REVERSED".
  var notificationType: String?
  /// 0 (other) or 1 (an issue in the app); default 0.
  var revocationReason: Int32?
  /// Default true: POST the notification to the notify URL when one is known.
  var deliver: Bool?
  /// Overrides the server's `--notify-url` for this notification.
  var notifyUrl: String?
}
