import Foundation
import HTTP
import StorekeeperCore

/// What a request for an offering says of itself, from query parameters or the headers an app
/// sends with every request (the parameter wins): `storefront` / `Storekeeper-Storefront`,
/// `store` / `Storekeeper-Store`, `app_version` / `Storekeeper-App-Version`, `locale` /
/// `Accept-Language` (its first tag). A value given but malformed is 400 with its field
/// (`invalid_storefront` for the storefront, checked first; `invalid_query` for the rest),
/// except `Accept-Language`, which browsers and HTTP libraries fill in on their own (`*`): one
/// that is not a language tag is no locale.
enum OfferingRequest {
  static let storeHeader = "Storekeeper-Store"
  static let versionHeader = "Storekeeper-App-Version"
  /// Every request header the chosen offering may depend on.
  static let vary =
    "\(StorefrontRequest.header), \(storeHeader), \(versionHeader), Accept-Language, Authorization"
  static let known: Set<String> = ["storefront", "store", "app_version", "locale", "user_id"]

  /// The request's facts and the user it names (`user_id`, checked after the facts): nil when
  /// it names none. The one pass over the query finds both, rather than hashing `user_id`
  /// again.
  static func read(_ request: Request) throws -> (facts: RequestFacts, named: String?) {
    var problems: [FieldError] = []
    let (given, unknown) = Given.from(request.query)
    if unknown {
      // Sorted, for a stable answer, only when there is something to refuse.
      for name in request.query.keys.sorted() where !known.contains(name) {
        problems.append(FieldError(field: name, message: "is not a known parameter"))
      }
    }
    // The storefront first, with GET /v1/products' own error (`invalid_storefront`), so an app
    // handles a wrong storefront one way on both routes.
    let storefront = try StorefrontRequest.storefront(
      parameter: given.storefront, header: request.headers[StorefrontRequest.header])
    let facts = facts(given, request, storefront: storefront) { problems.append($0) }
    guard problems.isEmpty else {
      throw HTTPError(
        400, code: "invalid_query", detail: "one or more request parameters are invalid",
        fields: problems)
    }
    guard let named = given.user else { return (facts, nil) }
    guard UserId.isValid(named) else {
      throw HTTPError(
        400, code: "invalid_query", detail: "user_id must be 1-128 printable characters",
        fields: [FieldError(field: "user_id", message: "must be 1-128 printable characters")])
    }
    return (facts, named)
  }

  /// What another request of the app (an order) says of itself, read as this route reads it
  /// (the same parameters first, then the same headers), to judge the placement's rules as
  /// this route would have: an app that asked for its offering with `?storefront=DEU` and
  /// orders with it is judged in Germany on both. `storefront` is the one the order is priced
  /// for (already checked, by the same rule). Nothing else is refused here: a malformed value
  /// says nothing, as a missing one, and other parameters are not this reader's.
  static func facts(of request: Request, storefront: String?) -> RequestFacts {
    facts(Given.from(request.query).given, request, storefront: storefront) { _ in }
  }

  /// The request's facts, each from its parameter when given, else its header; a value given
  /// but malformed is no fact, and is reported to `invalid` with the field it came from.
  private static func facts(
    _ given: Given, _ request: Request, storefront: String?, invalid: (FieldError) -> Void
  ) -> RequestFacts {
    var facts = RequestFacts()
    facts.storefront = storefront
    if let (field, text) = value(given.store, "store", request, storeHeader) {
      if let store = AppStoreName(rawValue: text) {
        facts.store = store
      } else {
        invalid(FieldError(field: field, message: "must be app_store or google_play"))
      }
    }
    if let (field, text) = value(given.appVersion, "app_version", request, versionHeader) {
      if let version = AppVersion(text) {
        facts.appVersion = version
      } else {
        invalid(
          FieldError(field: field, message: "must be a version of 1-4 numbers such as 2.1.0"))
      }
    }
    if let text = given.locale {
      if TargetingRule.isLanguageTag(text) {
        facts.locale = text
      } else {
        invalid(FieldError(field: "locale", message: "must be a language tag such as de-AT"))
      }
    } else {
      facts.locale = headerLocale(request)
    }
    return facts
  }

  /// `Accept-Language`'s first tag, when it is a language tag (`*`, which HTTP libraries send
  /// on their own, is no locale).
  private static func headerLocale(_ request: Request) -> String? {
    guard let header = request.headers["Accept-Language"],
      let first = header.split(separator: ",").first.map({
        String($0.split(separator: ";").first ?? "").trimmingCharacters(in: [" ", "\t"])
      }),
      TargetingRule.isLanguageTag(first)
    else { return nil }
    return first
  }

  /// The parameters this route reads, as given.
  private struct Given {
    var storefront: String?
    var store: String?
    var appVersion: String?
    var locale: String?
    var user: String?

    /// The query in one pass (it usually holds one parameter, or none) rather than a hashed
    /// lookup per name; `unknown` when it holds a name this route does not read.
    static func from(_ query: [String: String]) -> (given: Given, unknown: Bool) {
      var given = Given()
      var unknown = false
      for (name, text) in query {
        switch name {
        case "storefront": given.storefront = text
        case "store": given.store = text
        case "app_version": given.appVersion = text
        case "locale": given.locale = text
        case "user_id": given.user = text
        default: unknown = true
        }
      }
      return (given, unknown)
    }
  }

  private static func value(
    _ given: String?, _ parameter: String, _ request: Request, _ header: String
  ) -> (field: String, text: String)? {
    if let text = given { return (parameter, text) }
    if let text = request.headers[header] { return (header, text) }
    return nil
  }
}
