import Testing

@testable import StorekeeperCore

@Suite struct TargetingRuleTests {
  private func parse(_ json: String) throws -> (rules: [TargetingRule], problems: [String]) {
    let value = try JSONParser.parse(Array(json.utf8), maxDepth: 16)
    let parsed = TargetingRule.parseList(value)
    return (parsed.rules, parsed.problems.map(\.field))
  }

  private func rules(_ json: String) throws -> [TargetingRule] {
    let parsed = try parse(json)
    #expect(parsed.problems.isEmpty, "\(parsed.problems)")
    return parsed.rules
  }

  private func first(
    _ rules: [TargetingRule], _ request: RequestFacts, _ user: UserFacts?
  ) async -> String? {
    await TargetingRule.firstMatch(rules, request: request) { user }?.offeringId
  }

  @Test func everyConditionParsesAndStorefrontsAreStoredAsAlpha3() throws {
    let parsed = try rules(
      """
      [{"offering_id": "all", "when": {"storefronts": ["DE", "FRA", "DEU"], "stores": ["google_play"],
        "app_version": {"from": "2.0", "before": "3"}, "locales": ["pt-BR"], "user": "returning",
        "has_paid": false, "holds_entitlement": "vip", "lacks_entitlement": "gold_pass",
        "balance": {"asset": "gold", "at_least": 10, "below": 1e3}}},
       {"offering_id": "anyone"}]
      """)
    #expect(parsed.count == 2)
    let when = parsed[0].when
    #expect(when.storefronts == ["DEU", "FRA"])
    #expect(when.stores == [.googlePlay])
    #expect(when.appVersion?.from == AppVersion("2"))
    #expect(when.balance == BalanceCondition(asset: "gold", atLeast: 10, below: 1000))
    #expect(when.needsUser)
    #expect(!parsed[1].when.needsUser)
  }

  @Test func eachProblemNamesItsField() throws {
    let cases: [(String, [String])] = [
      (#"{}"#, ["rules"]),
      (
        #"[{"offering_id": "x", "when": {"storefronts": ["DEU", "ZZ"]}}]"#,
        ["rules[0].when.storefronts[1]"]
      ),
      (
        #"[{"offering_id": "x", "when": {"app_version": {"from": "1..2"}}}]"#,
        ["rules[0].when.app_version.from"]
      ),
      (
        #"[{"offering_id": "x", "when": {"app_version": {"from": "2", "before": "2.0"}}}]"#,
        ["rules[0].when.app_version.before"]
      ),
      (
        #"[{"offering_id": "x"}, {"when": {"user": "maybe"}}]"#,
        ["rules[1].offering_id", "rules[1].when.user"]
      ),
      (
        #"[{"offering_id": "x", "when": {"balance": {"asset": "gold", "at_least": 1.5}}}]"#,
        ["rules[0].when.balance.at_least"]
      ),
      (#"[{"offering_id": "x", "when": {"locales": ["d"]}}]"#, ["rules[0].when.locales[0]"]),
      (#"[{"offering_id": "x", "when": {"stores": "app_store"}}]"#, ["rules[0].when.stores"]),
      (#"[{"offering_id": "x", "when": {"has_paid": null}}]"#, ["rules[0].when.has_paid"]),
    ]
    for (json, fields) in cases {
      let parsed = try parse(json)
      #expect(parsed.problems == fields, "\(json)")
      #expect(parsed.rules.isEmpty, "a list with a problem yields no rules: \(json)")
    }
  }

  @Test func theFirstMatchingRuleWinsAndUnsaidRequestFactsMatchNothing() async throws {
    let parsed = try rules(
      """
      [{"offering_id": "german", "when": {"storefronts": ["DEU"]}},
       {"offering_id": "android", "when": {"stores": ["google_play"]}},
       {"offering_id": "v2", "when": {"app_version": {"from": "2.0", "before": "2.5"}}},
       {"offering_id": "french", "when": {"locales": ["fr"]}}]
      """)
    #expect(
      await first(parsed, RequestFacts(storefront: "DEU", store: .googlePlay), nil) == "german")
    #expect(
      await first(parsed, RequestFacts(storefront: "FRA", store: .googlePlay), nil) == "android")
    #expect(await first(parsed, RequestFacts(appVersion: AppVersion("2.4.99")), nil) == "v2")
    #expect(await first(parsed, RequestFacts(appVersion: AppVersion("2.5")), nil) == nil)
    #expect(await first(parsed, RequestFacts(appVersion: AppVersion("1.9")), nil) == nil)
    #expect(await first(parsed, RequestFacts(locale: "FR-ca"), nil) == "french")
    #expect(await first(parsed, RequestFacts(locale: "fry"), nil) == nil)
    #expect(await first(parsed, RequestFacts(), nil) == nil)
  }

  @Test func userConditionsReadTheFactsOnceAndFailForAnonymousCallers() async throws {
    let parsed = try rules(
      """
      [{"offering_id": "vip", "when": {"holds_entitlement": "vip"}},
       {"offering_id": "rich", "when": {"balance": {"asset": "gold", "at_least": 100}}},
       {"offering_id": "poor", "when": {"balance": {"asset": "gold", "below": 5}}},
       {"offering_id": "fresh", "when": {"user": "new"}},
       {"offering_id": "payer", "when": {"has_paid": true, "lacks_entitlement": "vip"}},
       {"offering_id": "rest"}]
      """)
    let none = RequestFacts()
    #expect(await first(parsed, none, nil) == "rest")
    #expect(await first(parsed, none, .unknown) == "poor", "no gold is a balance of 0")
    let known = UserFacts(isKnown: true, hasPaid: false, balances: ["gold": 50])
    #expect(await first(parsed, none, known) == "rest")
    #expect(
      await first(parsed, none, UserFacts(isKnown: false, hasPaid: false, balances: ["gold": 5]))
        == "fresh")
    #expect(
      await first(parsed, none, UserFacts(isKnown: true, hasPaid: true, balances: ["gold": 99]))
        == "payer")
    #expect(
      await first(parsed, none, UserFacts(isKnown: true, hasPaid: true, balances: ["gold": 100]))
        == "rich")
    #expect(
      await first(parsed, none, UserFacts(isKnown: true, hasPaid: true, entitlements: ["vip"]))
        == "vip")

    var reads = 0
    let counted = await TargetingRule.firstMatch(parsed, request: none) {
      reads += 1
      return known
    }
    #expect(counted?.offeringId == "rest" && reads == 1)
    let requestOnly = try rules(
      #"[{"offering_id": "a", "when": {"stores": ["app_store"]}}, {"offering_id": "b"}]"#)
    var asked = false
    _ = await TargetingRule.firstMatch(requestOnly, request: none) {
      asked = true
      return nil
    }
    #expect(!asked, "rules on the request alone never ask for the user")
  }

  @Test func versionsCompareNumberByNumber() {
    #expect(AppVersion("2.10")! > AppVersion("2.9")!)
    #expect(AppVersion("2.0.0") == AppVersion("2"))
    #expect(AppVersion("1.2.3.4")! < AppVersion("1.2.3.5")!)
    for bad in ["", "1.", ".1", "1..2", "1.2.3.4.5", "v1", "1.-2", "1234567890"] {
      #expect(AppVersion(bad) == nil, "\(bad)")
    }
  }

  @Test func storefrontsTakeEitherSpelling() {
    #expect(Storefront.canonical("DE") == "DEU")
    #expect(Storefront.canonical("de") == nil, "both stores send upper case")
    #expect(Storefront.canonical("DEU") == "DEU")
    #expect(Storefront.canonical("XK") == "XKS")
    #expect(Storefront.canonical("ZZ") == nil)
    #expect(Storefront.canonical("ZZZ") == nil)
    #expect(Storefront.canonical("DEUX") == nil)
    #expect(Storefront.allCodes.count == 250)
  }

  @Test func everyAlpha3CodeIsItsOwnStorefrontAndNothingElseOfThreeLetters() {
    let codes = Set(Storefront.allCodes)
    for code in codes { #expect(Storefront.canonical(code) == code) }
    // Every other three capital letters, and near misses in case and alphabet.
    let letters = (UInt8(ascii: "A")...UInt8(ascii: "Z")).map { Character(UnicodeScalar($0)) }
    var refused = 0
    for a in letters {
      for b in letters {
        for c in letters where !codes.contains(String([a, b, c])) {
          #expect(Storefront.canonical(String([a, b, c])) == nil)
          refused += 1
        }
      }
    }
    #expect(refused == 26 * 26 * 26 - codes.count)
    for text in ["deu", "DEu", "DE1", "@EU", "[EU", "DÉU", "D U"] {
      #expect(Storefront.canonical(text) == nil, "\(text)")
    }
    #expect(Storefront.canonical("DEU"[...]) == "DEU", "a substring, through the generic form")
  }
}
