/// What a request for an offering says of where it comes from; each is nil when it does not say.
package struct RequestFacts: Sendable, Equatable {
  /// ISO 3166-1 alpha-3.
  package var storefront: String?
  package var store: AppStoreName?
  package var appVersion: AppVersion?
  /// A BCP 47 tag as sent (`de-AT`), compared case-insensitively.
  package var locale: String?

  package init(
    storefront: String? = nil, store: AppStoreName? = nil, appVersion: AppVersion? = nil,
    locale: String? = nil
  ) {
    self.storefront = storefront
    self.store = store
    self.appVersion = appVersion
    self.locale = locale
  }
}
