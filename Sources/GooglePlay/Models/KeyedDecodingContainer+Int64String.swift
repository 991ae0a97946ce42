import Foundation

extension KeyedDecodingContainer {
  /// An `int64` field of the Discovery document: JSON strings on the wire ("1700000000000"),
  /// since JSON numbers lose precision past 2^53. A number is taken too; anything else fails.
  func decodeInt64StringIfPresent(forKey key: Key) throws -> Int64? {
    guard contains(key), try !decodeNil(forKey: key) else { return nil }
    if let text = try? decode(String.self, forKey: key) {
      guard let value = Int64(text) else {
        throw DecodingError.dataCorruptedError(
          forKey: key, in: self, debugDescription: "not an int64 string: \(text.prefix(40))")
      }
      return value
    }
    return try decode(Int64.self, forKey: key)
  }
}
