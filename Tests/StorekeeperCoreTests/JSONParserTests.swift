import Foundation
import Testing

@testable import StorekeeperCore

@Suite struct JSONParserTests {
  func parse(_ text: String, maxDepth: Int = 16) throws(JSONParser.Failure) -> JSONValue {
    try JSONParser.parse(Array(text.utf8), maxDepth: maxDepth)
  }

  @Test func readsEveryKindAndKeepsNumbersAsWritten() throws {
    let value = try parse(
      #" { "s": "a\"b\\c\/d\n\u00e9\ud83d\ude00", "n": -12.50e+3, "i": 0, "t": true, "f": false, "z": null, "a": [1, [], {}] } "#
    )
    #expect(
      value
        == .object([
          "s": .string("a\"b\\c/d\né😀"), "n": .number("-12.50e+3"), "i": .number("0"),
          "t": .bool(true), "f": .bool(false), "z": .null,
          "a": .array([.number("1"), .array([]), .object([:])]),
        ]))
    #expect(try parse(#""caf\u00e9 ü""#) == .string("café ü"))
  }

  /// jsonb and json text as PostgreSQL writes it, read by the parser (`databaseText`) and by
  /// Foundation's decoder as before: encoded again, both give the same bytes, so no answer built
  /// from a stored document changed when its reader did.
  @Test(arguments: [
    #"{"a": 1, "b": [1.50, -0.5, 1.0, 0, 100000000000000000000], "c": {"d": null, "e": true}}"#,
    #"{"id" : 7, "trade_status" : "TRADE_SUCCESS", "amount" : 0.99, "at" : "2026-12-06T06:00:00.000Z"}"#,
    #"[{"gold": 100}, "café ü 😀", "a\"b\\c\n", [], {}]"#,
    #""text""#, "12.5", "null", "false",
  ])
  func databaseTextEncodesAsFoundationsReadingDid(text: String) throws {
    let parsed = try JSONValue(databaseText: text)
    let decoded = try JSONCoding.decode(JSONValue.self, fromText: text)
    #expect(try JSONCoding.text(parsed) == JSONCoding.text(decoded))
  }

  @Test(arguments: [
    "", " ", "{", "}", "[1,]", "{\"a\":1,}", "{\"a\" 1}", "{a:1}", "'a'", "01", "-", "1.", ".5",
    "1e", "+1", "0x10", "tru", "nulll", "NaN", "Infinity", "[1 2]", "{\"a\":1}x", "\"\\x\"",
    "\"\\u12\"", "\"\\ud800\"", "\"\\udc00\"", "\"\\ud800\\u0041\"", "\"a\tb\"", "\"unterminated",
    "{\"a\":1,\"a\":2}", "[\"\u{7}\"]",
  ])
  func refusesWhatIsNotStrictJSON(_ text: String) {
    #expect(throws: JSONParser.Failure.self) { try parse(text) }
  }

  /// Keys are hashed and values compared by canonical equivalence: a string with a long run of
  /// combining marks (quadratic to put in canonical order) is refused as it is read.
  @Test func refusesAStringWithALongRunOfCombiningMarks() throws {
    let marks =
      "a" + String(repeating: "\u{301}", count: 8_000) + String(repeating: "\u{316}", count: 8_000)
    #expect(throws: JSONParser.Failure.self) { try parse("{\"\(marks)\": 0}") }
    #expect(throws: JSONParser.Failure.self) { try parse("[\"\(marks)\"]") }
    #expect(
      try parse("{\"cafe\u{301}\": \"\u{1E0D}\u{307}\"}")
        == .object(["cafe\u{301}": .string("\u{1E0D}\u{307}")]))
  }

  @Test func refusesInvalidUTF8() {
    #expect(throws: JSONParser.Failure.self) {
      try JSONParser.parse([0x22, 0xC3, 0x28, 0x22], maxDepth: 4)
    }
    #expect(throws: JSONParser.Failure.self) {
      try JSONParser.parse([0x22, 0xED, 0xA0, 0x80, 0x22], maxDepth: 4)
    }
  }

  @Test func boundsNestingBeforeItCanExhaustTheStack() throws {
    #expect(try parse("[[[1]]]", maxDepth: 3) == .array([.array([.array([.number("1")])])]))
    #expect(throws: JSONParser.Failure.tooDeep) { try parse("[[[[1]]]]", maxDepth: 3) }
    let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
    #expect(throws: JSONParser.Failure.tooDeep) { try parse(deep) }
  }

  /// Differential check against Foundation on documents both must accept.
  @Test func agreesWithFoundationOnValidDocuments() throws {
    let documents = [
      #"{"user_id":"guest:9b1d","product_id":"com.example.gold","quantity":3}"#,
      #"{"grants":{"balance":{"gold":100}},"content":{"text":"Thanks!","list":[1,2.5,-3e2,true,null]}}"#,
      #"{"unicode":"\u4e2d\u6587 \ud834\udd1e","escapes":"\b\f\n\r\t\"\\\/"}"#,
      #"[{"a":[{"b":[{"c":{}}]}]}]"#,
    ]
    for document in documents {
      let ours = try parse(document)
      let theirs = try JSONSerialization.jsonObject(
        with: Data(document.utf8), options: [.fragmentsAllowed])
      #expect(Self.same(ours, theirs), "\(document)")
    }
  }

  static func same(_ value: JSONValue, _ other: Any) -> Bool {
    switch value {
    case .null: return other is NSNull
    case .bool(let flag): return (other as? Bool) == flag
    case .number(let text):
      return (other as? NSNumber).map { $0.doubleValue == Double(text) } ?? false
    case .string(let text): return (other as? String) == text
    case .array(let values):
      guard let array = other as? [Any], array.count == values.count else { return false }
      return zip(values, array).allSatisfy { same($0, $1) }
    case .object(let members):
      guard let dictionary = other as? [String: Any], dictionary.count == members.count else {
        return false
      }
      return members.allSatisfy { key, member in dictionary[key].map { same(member, $0) } ?? false }
    }
  }
}
