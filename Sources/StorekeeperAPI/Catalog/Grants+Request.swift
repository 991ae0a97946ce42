import StorekeeperCore

extension Grants {
  /// Grants as a request body gives them, with openapi.yaml's types: amounts and durations are
  /// integers however written (`100`, `100.0`: JSON Schema integers), nothing is null, no key is
  /// unknown. Each problem is reported under `grants.*`; what fits the product's type is checked
  /// afterwards by `problems(for:)`.
  static func read(_ object: [String: JSONValue], into fields: inout RequestFields) -> Grants {
    var grants = Grants()
    for key in object.keys.sorted() {
      let field = "grants.\(key)"
      switch (key, object[key] ?? .null) {
      case ("balance", .object(let assets)):
        var balance: [String: Int64] = [:]
        for asset in assets.keys.sorted() {
          switch assets[asset].map(Self.integer) {
          case .value(let amount)?: balance[asset] = amount
          case .outOfRange?: fields.fail("\(field).\(asset)", "must be between 1 and \(maxAmount)")
          default: fields.fail("\(field).\(asset)", "must be an integer")
          }
        }
        grants.balance = balance
      case ("balance", _):
        fields.fail(field, "must be an object of asset amounts such as {\"gold\": 100}")
      case ("entitlement", .string(let name)):
        grants.entitlement = name
      case ("entitlement", _):
        fields.fail(field, "must be a string")
      case ("duration_days", let value):
        if case .value(let days) = Self.integer(value), let days = Int(exactly: days) {
          grants.durationDays = days
        } else {
          fields.fail(field, "must be an integer between 1 and 3660")
        }
      default:
        fields.fail(field, "is not a known grant")
      }
    }
    return grants
  }

  private static func integer(_ value: JSONValue) -> JSONInteger {
    if case .number(let number) = value { return JSONInteger(number) }
    return .notAnInteger
  }
}
