/// Reading rules from JSON (an admin's body, or the stored column): every problem is reported
/// with the path of the field that is wrong (`rules[2].when.app_version.from`), so an admin
/// fixes a rule without guessing.
extension TargetingRule {
  package typealias Problem = (field: String, message: String)

  package static func parseList(_ value: JSONValue, field: String = "rules")
    -> (rules: [TargetingRule], problems: [Problem])
  {
    guard case .array(let items) = value else {
      return ([], [(field, "must be an array of rules")])
    }
    guard items.count <= maxRules else {
      return ([], [(field, "must have at most \(maxRules) rules")])
    }
    var rules: [TargetingRule] = []
    var problems: [Problem] = []
    for (index, item) in items.enumerated() {
      if let rule = parse(item, field: "\(field)[\(index)]", problems: &problems) {
        rules.append(rule)
      }
    }
    return (problems.isEmpty ? rules : [], problems)
  }

  static func parse(_ value: JSONValue, field: String, problems: inout [Problem])
    -> TargetingRule?
  {
    guard case .object(let object) = value else {
      problems.append((field, "must be an object with offering_id and when"))
      return nil
    }
    let before = problems.count
    for key in object.keys.sorted() where key != "offering_id" && key != "when" {
      problems.append(("\(field).\(key)", "is not a known field"))
    }
    var offeringId = ""
    switch object["offering_id"] {
    case .string(let id)? where OfferingDraft.isValidId(id): offeringId = id
    case nil: problems.append(("\(field).offering_id", "is required"))
    default: problems.append(("\(field).offering_id", "must be 1-64 of [a-z0-9_-]"))
    }
    var conditions = TargetingConditions()
    switch object["when"] {
    case nil: break
    case .object(let when)?:
      conditions = parseConditions(when, field: "\(field).when", problems: &problems)
    default: problems.append(("\(field).when", "must be an object of conditions"))
    }
    guard problems.count == before else { return nil }
    return TargetingRule(offeringId: offeringId, when: conditions)
  }

  static func parseConditions(
    _ object: [String: JSONValue], field: String, problems: inout [Problem]
  ) -> TargetingConditions {
    var when = TargetingConditions()
    for key in object.keys.sorted() {
      let path = "\(field).\(key)"
      let value = object[key] ?? .null
      switch key {
      case "storefronts":
        when.storefronts = strings(value, path, &problems) { text in
          Storefront.canonical(text).map { .success($0) }
            ?? .failure("is not an ISO 3166-1 country code such as DEU or DE")
        }
      case "stores":
        when.stores = strings(value, path, &problems) { text in
          AppStoreName(rawValue: text).map { .success($0) }
            ?? .failure("must be app_store or google_play")
        }
      case "locales":
        when.locales = strings(value, path, &problems) { text in
          isLanguageTag(text)
            ? .success(text) : .failure("must be a language tag such as de or pt-BR")
        }
      case "app_version":
        when.appVersion = versionRange(value, path, &problems)
      case "user":
        if case .string(let text) = value, let kind = UserKind(rawValue: text) {
          when.user = kind
        } else {
          problems.append((path, "must be new or returning"))
        }
      case "has_paid":
        if case .bool(let paid) = value {
          when.hasPaid = paid
        } else {
          problems.append((path, "must be true or false"))
        }
      case "holds_entitlement", "lacks_entitlement":
        guard case .string(let name) = value, Grants.isName(name) else {
          problems.append((path, "entitlement names are 1-64 of [a-z0-9_]"))
          continue
        }
        if key == "holds_entitlement" {
          when.holdsEntitlement = name
        } else {
          when.lacksEntitlement = name
        }
      case "balance":
        when.balance = balance(value, path, &problems)
      default:
        problems.append((path, "is not a known condition"))
      }
    }
    return when
  }

  enum Item<T> {
    case success(T)
    case failure(String)
  }

  /// A non-empty array of distinct strings, each read by `read`.
  private static func strings<T: Equatable>(
    _ value: JSONValue, _ field: String, _ problems: inout [Problem],
    _ read: (String) -> Item<T>
  ) -> [T]? {
    guard case .array(let items) = value, (1...maxListItems).contains(items.count) else {
      problems.append((field, "must be an array of 1-\(maxListItems) strings"))
      return nil
    }
    var values: [T] = []
    for (index, item) in items.enumerated() {
      guard case .string(let text) = item, text.utf8.count <= 64 else {
        problems.append(("\(field)[\(index)]", "must be a string of at most 64 bytes"))
        continue
      }
      switch read(text) {
      case .success(let parsed):
        if !values.contains(parsed) { values.append(parsed) }
      case .failure(let message):
        problems.append(("\(field)[\(index)]", message))
      }
    }
    return values
  }

  private static func versionRange(
    _ value: JSONValue, _ field: String, _ problems: inout [Problem]
  ) -> VersionRange? {
    guard case .object(let object) = value else {
      problems.append((field, "must be an object with from and/or before"))
      return nil
    }
    var range = VersionRange()
    for key in object.keys.sorted() {
      let path = "\(field).\(key)"
      guard key == "from" || key == "before" else {
        problems.append((path, "is not a known field; use from and before"))
        continue
      }
      guard case .string(let text)? = object[key], let version = AppVersion(text) else {
        problems.append((path, "must be a version of 1-4 numbers such as \"2.1.0\""))
        continue
      }
      if key == "from" { range.from = version } else { range.before = version }
    }
    if object.isEmpty { problems.append((field, "must name from, before or both")) }
    if let from = range.from, let before = range.before, !(from < before) {
      problems.append(("\(field).before", "must be a later version than from"))
    }
    return range
  }

  private static func balance(_ value: JSONValue, _ field: String, _ problems: inout [Problem])
    -> BalanceCondition?
  {
    guard case .object(let object) = value else {
      problems.append((field, "must be an object with asset and at_least and/or below"))
      return nil
    }
    var condition = BalanceCondition(asset: "")
    for key in object.keys.sorted() {
      let path = "\(field).\(key)"
      switch (key, object[key] ?? .null) {
      case ("asset", .string(let asset)) where Grants.isName(asset):
        condition.asset = asset
      case ("asset", _):
        problems.append((path, "asset names are 1-64 of [a-z0-9_]"))
      case ("at_least", .number(let number)), ("below", .number(let number)):
        guard case .value(let amount) = JSONInteger(number), amount >= 0 else {
          problems.append((path, "must be a non-negative integer"))
          continue
        }
        if key == "at_least" { condition.atLeast = amount } else { condition.below = amount }
      case ("at_least", _), ("below", _):
        problems.append((path, "must be a non-negative integer"))
      default:
        problems.append((path, "is not a known field; use asset, at_least and below"))
      }
    }
    if object["asset"] == nil { problems.append(("\(field).asset", "is required")) }
    if object["at_least"] == nil && object["below"] == nil {
      problems.append((field, "must name at_least, below or both"))
    }
    if let low = condition.atLeast, let high = condition.below, low >= high {
      problems.append(("\(field).below", "must be greater than at_least"))
    }
    return condition
  }

  /// BCP 47's shape, loosely: 2-3 letters, then subtags of 1-8 letters or digits after `-`.
  package static func isLanguageTag(_ text: String) -> Bool {
    let parts = text.split(separator: "-", omittingEmptySubsequences: false)
    guard let language = parts.first, (2...3).contains(language.utf8.count),
      language.utf8.allSatisfy({ isLetter($0) })
    else { return false }
    return parts.dropFirst().allSatisfy { part in
      (1...8).contains(part.utf8.count)
        && part.utf8.allSatisfy {
          isLetter($0) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0)
        }
    }
  }

  private static func isLetter(_ byte: UInt8) -> Bool {
    (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
      || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
  }
}
