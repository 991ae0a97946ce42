import Foundation

/// The one JSON configuration of the API: explicit snake_case coding keys on every model,
/// sorted keys so equal values give equal bytes (ETags, idempotent replays).
package enum JSONCoding {
  static func encoder() -> JSONEncoder {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    return encoder
  }

  package static func encode<T: Encodable>(_ value: T) throws -> [UInt8] {
    Array(try encoder().encode(value))
  }

  static func decode<T: Decodable>(_ type: T.Type, from bytes: [UInt8]) throws -> T {
    try JSONDecoder().decode(type, from: Data(bytes))
  }

  package static func decode<T: Decodable>(_ type: T.Type, fromText text: String) throws -> T {
    try JSONDecoder().decode(type, from: Data(text.utf8))
  }

  package static func text<T: Encodable>(_ value: T) throws -> String {
    String(decoding: try encode(value), as: UTF8.self)
  }
}
