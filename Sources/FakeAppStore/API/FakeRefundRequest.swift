/// `POST /fake/v1/refunds`.
struct FakeRefundRequest: Decodable, Sendable {
  var transactionId: String
  /// "REFUND" (default), "REVOKE" or "REFUND_REVERSED".
  var notificationType: String?
  /// 0 (other) or 1 (an issue in the app); default 0.
  var revocationReason: Int32?
  /// Apple's `revocationType` on the refunded transaction: REFUND_FULL (default for REFUND and
  /// REVOKE), REFUND_PRORATED (with `revocation_percentage`) or FAMILY_REVOKE.
  var revocationType: String?
  /// Milliunits of percent refunded (40000 is 40%); 100000 (default) for a full refund.
  var revocationPercentage: Int32?
  /// Default true: POST the notification to the notify URL when one is known.
  var deliver: Bool?
  /// Overrides the server's `--notify-url` for this notification.
  var notifyUrl: String?
}
