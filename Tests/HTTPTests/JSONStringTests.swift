import Foundation
import StorekeeperLogging
import Testing

/// `JSONString` escapes log lines, problem bodies and order responses by hand: both of its
/// forms must write what Foundation's encoder writes.
@Suite struct JSONStringTests {
  static let samples = [
    "", "plain-ascii_123", "2026-11-29T15:22:08.477Z", "quote \" backslash \\ slash /",
    "newline \n tab \t cr \r", "control \u{01}\u{08}\u{0C}\u{1F}", "é 中文 😀", "\u{7F} del",
  ]

  @Test(arguments: samples)
  func escapesLikeFoundation(text: String) throws {
    let encoder = JSONEncoder()
    encoder.outputFormatting = .withoutEscapingSlashes
    let expected = String(decoding: try encoder.encode(text), as: UTF8.self)
    var string = ""
    JSONString.append(text, to: &string)
    var bytes: [UInt8] = []
    JSONString.append(text, to: &bytes)
    #expect(string == expected)
    #expect(String(decoding: bytes, as: UTF8.self) == expected)
    let decoded = try JSONDecoder().decode(String.self, from: Data(bytes))
    #expect(decoded == text)
  }
}
