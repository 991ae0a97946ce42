import HTTP
import StorekeeperCore

/// The body of `POST /v1/offers/signature`, validated field by field.
struct OfferRequest: Sendable, Equatable {
  /// Empty when the body names no user (a signed-in user may leave it out).
  var userId: String
  var productId: String
  var offerId: String
  /// Lowercase, as Apple signs and compares it; nil: the purchase carries none.
  var appAccountToken: String?

  static let fields: Set<String> = ["user_id", "product_id", "offer_id", "app_account_token"]

  static func parse(_ request: Request, userRequired: Bool) throws -> OfferRequest {
    var fields = try RequestFields(request: request)
    fields.rejectUnknown(allowed: Self.fields)
    let userId = fields.string("user_id", required: userRequired, maxLength: 128)
    if let userId, !UserId.isValid(userId) {
      fields.fail("user_id", "must be 1-128 printable characters")
    }
    let productId = fields.string("product_id", required: true, maxLength: 100)
    let offerId = fields.string("offer_id", required: true, maxLength: 64)
    if let offerId, !isValidOfferId(offerId) {
      fields.fail("offer_id", "must be 1-64 characters of A-Z, a-z, 0-9, '.', '_' or '-'")
    }
    let token = fields.string("app_account_token", maxLength: 36)
    if let token, AccountToken.normalized(token) == nil {
      fields.fail("app_account_token", "must be a UUID")
    }
    try fields.validate()
    return OfferRequest(
      userId: userId ?? "", productId: productId ?? "", offerId: offerId ?? "",
      appAccountToken: token?.lowercased())
  }

  /// App Store Connect's rule for a promotional offer's identifier.
  static func isValidOfferId(_ text: String) -> Bool {
    StoreIdentifier.isValid(text, maxLength: 64)
  }
}
