import Testing

@testable import Postgres

@Suite struct PostgresTextTests {
  @Test func findsANULWhereverItIs() {
    #expect(PostgresText.containsNUL("\u{0}"))
    #expect(PostgresText.containsNUL("\u{0}abc"))
    #expect(PostgresText.containsNUL("ab\u{0}c"))
    #expect(PostgresText.containsNUL("abc\u{0}"))
    #expect(PostgresText.containsNUL("é🎮\u{0}ü"))
    // Past the small-string size and in a long text, as a signed transaction is.
    #expect(PostgresText.containsNUL(String(repeating: "x", count: 4_000) + "\u{0}"))
  }

  @Test func aTextWithoutOneHasNone() {
    #expect(!PostgresText.containsNUL(""))
    #expect(!PostgresText.containsNUL("abc"))
    // No byte of a multi-byte character is zero.
    #expect(!PostgresText.containsNUL("é🎮ü\u{1}\u{7f}\u{80}\u{100}\u{10FFFF}"))
    #expect(!PostgresText.containsNUL(String(repeating: "é", count: 4_000)))
  }

  @Test func aSubstringsCopyIsSearchedOnlyWhereItLies() {
    let whole = "abc\u{0}def"
    #expect(!PostgresText.containsNUL(String(whole.prefix(3))))
    #expect(!PostgresText.containsNUL(String(whole.suffix(3))))
    #expect(PostgresText.containsNUL(String(whole.dropFirst(2))))
  }
}
