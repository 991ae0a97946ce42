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
    try await firstIndex(rules, request: request, user: user).map { rules[$0] }
  }

  /// `firstMatch(_:request:user:)` by index. By index throughout: a `for` loop over the rules
  /// copies (retains and releases) every rule it visits, on every request for the placement.
  package static func firstIndex(
    _ rules: [TargetingRule], request: RequestFacts,
    user: () async throws -> UserFacts?
  ) async rethrows -> Int? {
    var facts: UserFacts?? = nil
    for index in rules.indices where rules[index].when.matches(request) {
      if rules[index].when.needsUser {
        if facts == nil { facts = .some(try await user()) }
        guard rules[index].when.matches(facts ?? nil) else { continue }
      }
      return index
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
    firstIndexWithoutFacts(rules, request: request, hasUser: hasUser).map { $0.map { rules[$0] } }
  }

  /// `firstMatchWithoutFacts(_:request:hasUser:)` by index.
  /// Through the array's buffer: the array's own subscript copied each rule's conditions (a
  /// retain and release of each list in them) to test them, on every request.
  package static func firstIndexWithoutFacts(
    _ rules: [TargetingRule], request: RequestFacts, hasUser: Bool
  ) -> Int?? {
    rules.withUnsafeBufferPointer { rules -> Int?? in
      for index in rules.indices where rules[index].when.matches(request) {
        if rules[index].when.needsUser {
          if hasUser { return nil }
          guard rules[index].when.matches(nil) else { continue }
        }
        return .some(index)
      }
      return .some(nil)
    }
  }
}
