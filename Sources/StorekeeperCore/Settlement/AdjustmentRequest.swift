/// What an admin asks for in `POST /admin/v1/users/{user_id}/adjustments`, validated.
package struct AdjustmentRequest: Sendable, Equatable {
  var userId: String
  package var asset: String
  /// Positive grants, negative takes back; never zero, at most `maxAmount` either way.
  package var amount: Int64
  var environment: String
  var reason: String
  var idempotencyKey: String?

  package init(
    userId: String, asset: String, amount: Int64, environment: String, reason: String,
    idempotencyKey: String? = nil
  ) {
    self.userId = userId
    self.asset = asset
    self.amount = amount
    self.environment = environment
    self.reason = reason
    self.idempotencyKey = idempotencyKey
  }

  /// A bound well inside bigint, so no sum of adjustments can overflow a balance.
  package static let maxAmount: Int64 = 1_000_000_000

  /// Asset names as catalog grants spell them: 1-64 letters, digits, '_', '-' or '.'.
  package static func isValidAsset(_ text: String) -> Bool {
    !text.isEmpty && text.utf8.count <= 64
      && text.utf8.allSatisfy { byte in
        (byte >= 48 && byte <= 57) || (byte >= 65 && byte <= 90) || (byte >= 97 && byte <= 122)
          || byte == 95 || byte == 45 || byte == 46
      }
  }
}
