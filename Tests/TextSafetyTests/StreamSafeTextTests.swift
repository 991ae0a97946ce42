import Testing

@testable import TextSafety

@Suite struct StreamSafeTextTests {
  /// "a", then `count` acute accents (U+0301, class 230) and `count` grave-below marks (U+0316,
  /// class 220): out of canonical order, the run a normalizer must sort.
  static func marked(_ count: Int) -> String {
    "a" + String(repeating: "\u{301}", count: count) + String(repeating: "\u{316}", count: count)
  }

  @Test func textWithShortRunsOfMarksIsSafe() {
    for text in [
      "", "plain ascii", "café", "cafe\u{301}", "Ŝtorekeeper ü 😀", "ḍ̇", "नमस्ते", "한국어",
      Self.marked(15),
    ] {
      #expect(StreamSafeText.isStreamSafe(text), "\(text)")
    }
  }

  @Test func aRunOfMoreThanThirtyMarksIsNot() {
    #expect(!StreamSafeText.isStreamSafe(Self.marked(16)))
    #expect(!StreamSafeText.isStreamSafe("x" + String(repeating: "\u{301}", count: 31)))
    #expect(StreamSafeText.isStreamSafe("x" + String(repeating: "\u{301}", count: 30)))
    // A starter between two runs ends the first.
    let split =
      String(repeating: "\u{301}", count: 30) + "b" + String(repeating: "\u{301}", count: 30)
    #expect(StreamSafeText.isStreamSafe("a" + split))
    // Checked in one pass, however long: 64,000 marks.
    #expect(!StreamSafeText.isStreamSafe(Self.marked(32_000)))
    #expect(!StreamSafeText.isStreamSafe(Self.marked(32_000)[...]))
  }

  @Test func jsonCountsEscapedMarksAsTheScalarsTheyName() {
    let escaped = "{\"a" + String(repeating: "\\u0301", count: 31) + "\": 1}"
    #expect(!StreamSafeText.isStreamSafe(json: Array(escaped.utf8)))
    let raw = "{\"" + Self.marked(16) + "\": 1}"
    #expect(!StreamSafeText.isStreamSafe(json: Array(raw.utf8)))
    for fine in [
      #"{"a": "caf\u00e9 cafe\u0301", "b": "\n\"\\", "c": "\ud83d\ude00"}"#,
      "{\"x\": \"" + String(repeating: "\\u0301", count: 30) + "\"}", #"{"bad": "\u00"}"#,
      "plain",
    ] {
      #expect(StreamSafeText.isStreamSafe(json: Array(fine.utf8)), "\(fine)")
    }
    // Marks beyond U+FFFF written as surrogate pairs count as the one mark each names; a
    // lone surrogate names none and does not end a run either.
    let pairs = "{\"a" + String(repeating: "\\ud834\\udd85", count: 31) + "\": 1}"
    #expect(!StreamSafeText.isStreamSafe(json: Array(pairs.utf8)))
    let lone =
      "\"a" + String(repeating: "\\u0301", count: 15) + "\\ud834"
      + String(repeating: "\\u0301", count: 15) + "\""
    #expect(!StreamSafeText.isStreamSafe(json: Array(lone.utf8)))
    // A pair naming a starter (an emoji) ends a run like any starter.
    let emoji =
      "\"a" + String(repeating: "\\u0301", count: 30) + "\\ud83d\\ude00"
      + String(repeating: "\\u0301", count: 30) + "\""
    #expect(StreamSafeText.isStreamSafe(json: Array(emoji.utf8)))
    // A backslash escape between marks ends their run, as a starter does.
    let split =
      "\"a" + String(repeating: "\\u0301", count: 30) + "\\n"
      + String(repeating: "\\u0301", count: 30) + "\""
    #expect(StreamSafeText.isStreamSafe(json: Array(split.utf8)))
  }
}
