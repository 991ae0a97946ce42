/// One rule of a placement: when its conditions hold, the placement serves its offering.
/// A placement's rules are tried in order and the first that matches decides.
package struct TargetingRule: Encodable, Sendable, Equatable {
  package var offeringId: String
  package var when: TargetingConditions

  package init(offeringId: String, when: TargetingConditions = TargetingConditions()) {
    self.offeringId = offeringId
    self.when = when
  }

  enum CodingKeys: String, CodingKey {
    case offeringId = "offering_id"
    case when
  }

  package static let maxRules = 50
  package static let maxListItems = 250

  /// The first rule that matches, asking for the user's facts at most once and only when a
  /// rule whose request conditions hold has conditions on the user.
  package static func firstMatch(
    _ rules: [TargetingRule], request: RequestFacts,
    user: () async throws -> UserFacts?
  ) async rethrows -> TargetingRule? {
    var facts: UserFacts?? = nil
    for rule in rules where rule.when.matches(request) {
      if rule.when.needsUser {
        if facts == nil { facts = .some(try await user()) }
        guard rule.when.matches(facts ?? nil) else { continue }
      }
      return rule
    }
    return nil
  }

  /// The first rule that matches when the user's facts are not at hand: `.some` with the rule
  /// (or none) when choosing needs no facts, nil when a rule whose request conditions hold has
  /// conditions on the user and there is a user (then `firstMatch(_:request:user:)` reads
  /// them). Without a user every condition on the user fails, as there.
  package static func firstMatchWithoutFacts(
    _ rules: [TargetingRule], request: RequestFacts, hasUser: Bool
  ) -> TargetingRule?? {
    for rule in rules where rule.when.matches(request) {
      if rule.when.needsUser {
        if hasUser { return nil }
        guard rule.when.matches(nil) else { continue }
      }
      return .some(rule)
    }
    return .some(nil)
  }
}
