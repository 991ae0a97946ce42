import HTTP
import StorekeeperCore

/// The storefront a catalog or offering request names: `?storefront=` first, else the
/// `Storekeeper-Storefront` header an app sends with every request (StoreKit's
/// `Storefront.current.countryCode`, Google Play Billing's `BillingConfig.countryCode`).
/// Either spelling of ISO 3166-1 (DEU or DE, upper case); anything else is 400, since serving
/// default prices to a typo would show the wrong price silently.
enum StorefrontRequest {
  static let header = "Storekeeper-Storefront"
  static let parameter = "storefront"

  /// The alpha-3 code, or nil when the request names none. Both places are checked when both
  /// are sent, so a malformed header is never hidden by a good parameter.
  static func storefront(_ request: Request) throws -> String? {
    try storefront(parameter: request.query[parameter], header: request.headers[header])
  }

  /// The same from the values already read (the offerings route reads its query in one pass).
  static func storefront(parameter text: String?, header value: String?) throws -> String? {
    var chosen: String?
    var problems: [FieldError] = []
    if let text {
      chosen = Storefront.canonical(text)
      if chosen == nil { problems.append(Self.problem(parameter)) }
    }
    if let value {
      let code = Storefront.canonical(value)
      if code == nil { problems.append(Self.problem(header)) }
      chosen = chosen ?? code
    }
    guard problems.isEmpty else {
      throw HTTPError(
        400, code: "invalid_storefront",
        detail: "the storefront must be an ISO 3166-1 country code such as DEU or DE",
        fields: problems)
    }
    return chosen
  }

  private static func problem(_ field: String) -> FieldError {
    FieldError(field: field, message: "is not an ISO 3166-1 country code")
  }
}
