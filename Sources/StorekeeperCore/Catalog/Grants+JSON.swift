extension Grants {
  /// The fields as `Encodable` names them, nil ones left out.
  var jsonValue: JSONValue {
    var fields: [String: JSONValue] = [:]
    fields["balance"] = balance.map { .object($0.mapValues { .number(String($0)) }) }
    fields["duration_days"] = durationDays.map { .number(String($0)) }
    fields["entitlement"] = entitlement.map { .string($0) }
    return .object(fields)
  }
}
