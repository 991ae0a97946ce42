extension Grants {
  /// A product's stored `grants`, read by `JSONParser` as other jsonb columns are: every report
  /// reads its product, and Foundation's decoder took about 3% of the server's CPU per report
  /// here. The same rules as `Decodable`'s: an absent or null member is nil, unknown members
  /// are ignored, a value of the wrong kind is an error.
  init(databaseText text: String) throws {
    guard case .object(let members) = try JSONValue(databaseText: text) else {
      throw Self.corrupt("grants are not an object")
    }
    switch members["balance"] {
    case nil, .null?: balance = nil
    case .object(let assets)?:
      var credits: [String: Int64] = [:]
      for (asset, amount) in assets {
        guard case .number(let number) = amount, case .value(let value) = JSONInteger(number)
        else { throw Self.corrupt("balance \(asset) is not a whole number") }
        credits[asset] = value
      }
      balance = credits
    default: throw Self.corrupt("balance is not an object")
    }
    switch members["entitlement"] {
    case nil, .null?: entitlement = nil
    case .string(let name)?: entitlement = name
    default: throw Self.corrupt("entitlement is not a string")
    }
    switch members["duration_days"] {
    case nil, .null?: durationDays = nil
    case .number(let number)?:
      guard case .value(let value) = JSONInteger(number), let days = Int(exactly: value) else {
        throw Self.corrupt("duration_days is not a whole number")
      }
      durationDays = days
    default: throw Self.corrupt("duration_days is not a number")
    }
  }

  private static func corrupt(_ detail: String) -> DecodingError {
    .dataCorrupted(.init(codingPath: [], debugDescription: "stored grants: \(detail)"))
  }
}
