import Testing

@testable import StorekeeperCore

@Suite struct TradeNumberTests {
  @Test func isShortSortableAndOfTheAllowedAlphabet() {
    let first = TradeNumber.make()
    #expect(first.count == 37)
    #expect(TradeNumber.isWellFormed(first))
    #expect(first.prefix(17).allSatisfy { $0.isNumber })
    let later = (0..<1000).map { _ in TradeNumber.make() }
    #expect(Set(later).count == 1000)
    #expect(later.allSatisfy { $0.prefix(17) >= first.prefix(17) })
  }

  @Test func randomPartIsNotPredictable() {
    // Same millisecond or not, the 20 random characters must differ and use the whole alphabet.
    let suffixes = (0..<2000).map { _ in TradeNumber.make().suffix(20) }
    let characters = Set(suffixes.joined())
    #expect(characters.count == 62)
  }

  @Test func everyCharacterIsEquallyLikely() {
    // 80,000 draws: about 1,290 of each character, standard deviation about 36. A modulo bias
    // (a byte % 62 without rejection) would give the first eight characters about 1,610.
    var counts: [Character: Int] = [:]
    for _ in 0..<4000 {
      for character in TradeNumber.make().suffix(20) { counts[character, default: 0] += 1 }
    }
    #expect(counts.count == 62)
    #expect(counts.values.allSatisfy { (1090...1490).contains($0) }, "\(counts)")
  }

  @Test func rejectsMalformedNumbers() {
    #expect(!TradeNumber.isWellFormed(""))
    #expect(!TradeNumber.isWellFormed("abc-def"))
    #expect(!TradeNumber.isWellFormed(String(repeating: "a", count: 65)))
    #expect(!TradeNumber.isWellFormed("1' OR '1'='1"))
  }
}
