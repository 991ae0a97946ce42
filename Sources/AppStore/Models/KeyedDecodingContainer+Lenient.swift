extension KeyedDecodingContainer {
  /// The value at `key`, or nil when it is absent, null or of another type: Apple adds and
  /// changes fields, and an optional field we do not depend on must never fail a decode.
  func lenient<T: Decodable>(_ key: Key, as type: T.Type = T.self) -> T? {
    (try? decodeIfPresent(type, forKey: key)) ?? nil
  }
}
