/// What a targeting rule asks of a request and of its user; every condition given must hold,
/// and a rule with none matches everyone. A condition on the request fails when the request
/// does not say (no storefront sent: no storefront list matches); a condition on the user fails
/// when there is no signed-in user.
package struct TargetingConditions: Encodable, Sendable, Equatable {
  /// Alpha-3 storefronts, any of which matches.
  package var storefronts: [String]?
  package var stores: [AppStoreName]?
  package var appVersion: VersionRange?
  /// Language tags (`de`, `pt-BR`): a request's locale matches a tag equal to it or one of its
  /// prefixes at a subtag boundary (`de` matches `de-AT`), case-insensitively.
  package var locales: [String]?
  package var user: UserKind?
  package var hasPaid: Bool?
  package var holdsEntitlement: String?
  package var lacksEntitlement: String?
  package var balance: BalanceCondition?

  package init() {}

  enum CodingKeys: String, CodingKey {
    case storefronts, stores
    case appVersion = "app_version"
    case locales, user
    case hasPaid = "has_paid"
    case holdsEntitlement = "holds_entitlement"
    case lacksEntitlement = "lacks_entitlement"
    case balance
  }

  /// Whether any condition is on the user, so that matching needs their facts.
  package var needsUser: Bool {
    user != nil || hasPaid != nil || holdsEntitlement != nil || lacksEntitlement != nil
      || balance != nil
  }

  /// The request's half: storefront, store, app version, locale.
  package func matches(_ request: RequestFacts) -> Bool {
    if let storefronts {
      guard let storefront = request.storefront, storefronts.contains(storefront) else {
        return false
      }
    }
    if let stores {
      guard let store = request.store, stores.contains(store) else { return false }
    }
    if let appVersion {
      guard let version = request.appVersion, appVersion.contains(version) else { return false }
    }
    if let locales {
      guard let locale = request.locale?.lowercased(),
        locales.contains(where: { Self.locale(locale, isWithin: $0.lowercased()) })
      else { return false }
    }
    return true
  }

  /// The user's half; `user` nil (nobody signed in) fails every user condition.
  package func matches(_ user: UserFacts?) -> Bool {
    guard needsUser else { return true }
    guard let user else { return false }
    if let kind = self.user, (kind == .returning) != user.isKnown { return false }
    if let hasPaid, hasPaid != user.hasPaid { return false }
    if let holdsEntitlement, !user.entitlements.contains(holdsEntitlement) { return false }
    if let lacksEntitlement, user.entitlements.contains(lacksEntitlement) { return false }
    if let balance, !balance.holds(user.balances) { return false }
    return true
  }

  static func locale(_ locale: String, isWithin tag: String) -> Bool {
    locale == tag || locale.hasPrefix(tag + "-") || locale.hasPrefix(tag + "_")
  }
}
