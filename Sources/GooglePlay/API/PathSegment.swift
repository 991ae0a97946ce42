/// One segment of an API path, from the caller: a package name, a product id or a purchase
/// token, each checked against what Google issues so nothing else reaches the URL, and a
/// `:verb` suffix kept apart from it.
struct PathSegment: Sendable {
  /// Purchase tokens run to a few hundred characters; Google does not promise a limit.
  static let maxLength = 1024

  var name: String
  var value: String
  var verb: String?
  var isLiteral = false

  static func literal(_ text: String) -> PathSegment {
    PathSegment(name: "path", value: text, isLiteral: true)
  }

  static func parameter(_ name: String, _ value: String, verb: String? = nil) -> PathSegment {
    PathSegment(name: name, value: value, verb: verb)
  }

  /// Nil when the value holds anything but letters, digits, `.`, `_` and `-` (the alphabet of
  /// package names, product ids and Google's base64url-ish tokens), or is empty or too long.
  var encoded: String? {
    guard !value.isEmpty, value.utf8.count <= Self.maxLength,
      isLiteral
        || value.utf8.allSatisfy({ byte in
          switch byte {
          case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"),
            UInt8(ascii: "-"):
            true
          default: false
          }
        })
    else { return nil }
    return verb.map { value + ":" + $0 } ?? value
  }
}
