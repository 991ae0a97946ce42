import Foundation

/// base64url without padding, strictly: one token has one spelling, so no character of it can
/// change without changing what it says.
enum JWTBase64URL {
  static func decode(_ text: Substring) -> [UInt8]? {
    let utf8 = text.utf8
    guard !utf8.isEmpty, utf8.count % 4 != 1,
      utf8.allSatisfy({ Self.alphabet.contains($0) })
    else { return nil }
    var standard = String(
      text.map { character -> Character in
        switch character {
        case "-": "+"
        case "_": "/"
        default: character
        }
      })
    while standard.utf8.count % 4 != 0 { standard += "=" }
    guard let data = Data(base64Encoded: standard) else { return nil }
    let bytes = [UInt8](data)
    // Non-zero unused bits in the last character would give a second spelling.
    guard encode(bytes) == text else { return nil }
    return bytes
  }

  static func encode(_ bytes: [UInt8]) -> String {
    var text = Data(bytes).base64EncodedString()
    while text.hasSuffix("=") { text.removeLast() }
    return String(
      text.map { character -> Character in
        switch character {
        case "+": "-"
        case "/": "_"
        default: character
        }
      })
  }

  private static let alphabet = Set(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
}
