import HTTP
import Testing

@testable import StorekeeperAPI
@testable import StorekeeperCore

/// A string field's rules: no NUL anywhere, and at most `maxLength` characters (Unicode
/// scalars), whatever their size in bytes.
@Suite struct RequestFieldsStringTests {
  func read(_ text: String, maxLength: Int = 4) -> (String?, [String]) {
    var fields = RequestFields(values: ["name": .string(text)])
    let value = fields.string("name", maxLength: maxLength)
    return (value, fields.errors.map(\.message))
  }

  @Test func aNULIsRefusedWherever() {
    for text in ["\u{0}", "a\u{0}", "é\u{0}", "\u{0}é"] {
      #expect(read(text).1 == ["must not contain NUL characters"])
    }
  }

  @Test func theLimitCountsCharactersNotBytes() {
    // Four two-byte and four-byte characters are four characters.
    #expect(read("éééé").0 == "éééé")
    #expect(read("🎮🎮🎮🎮").0 == "🎮🎮🎮🎮")
    #expect(read("éééé").1.isEmpty)
    #expect(read("ééééé").1 == ["must be at most 4 characters"])
    #expect(read("abcde").1 == ["must be at most 4 characters"])
    #expect(read("abcd").0 == "abcd")
  }
}
