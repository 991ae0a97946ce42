import HTTP
import StorekeeperCore

/// The storefront a catalog or offering request names: `?storefront=` first, else the
/// `Storekeeper-Storefront` header an app sends with every request (StoreKit's
/// `Storefront.current.countryCode`, Google Play Billing's `BillingConfig.countryCode`).
/// Either spelling of ISO 3166-1 (DEU or DE, any case); anything else is 400, since serving
/// default prices to a typo would show the wrong price silently.
enum StorefrontRequest {
  static let header = "Storekeeper-Storefront"
  static let parameter = "storefront"

  /// The alpha-3 code, or nil when the request names none.
  static func storefront(_ request: Request) throws -> String? {
    guard let text = request.query[parameter] ?? request.headers[header] else { return nil }
    guard let code = Storefront.canonical(text) else {
      let field = request.query[parameter] != nil ? parameter : header
      throw HTTPError(
        400, code: "invalid_storefront",
        detail: "the storefront must be an ISO 3166-1 country code such as DEU or DE",
        fields: [FieldError(field: field, message: "is not an ISO 3166-1 country code")])
    }
    return code
  }
}
