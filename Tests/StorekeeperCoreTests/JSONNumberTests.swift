import Foundation
import Testing

@testable import StorekeeperCore

/// Free-form JSON (a product's content, an offering's metadata) goes out with the digits it
/// came with, by either writer, and a number no writer can carry is refused before it is stored.
@Suite struct JSONNumberTests {
  @Test(arguments: [
    ("12345678901234567890123", "12345678901234567890123"), ("0.1", "0.1"), ("2.50", "2.5"),
    ("1E2", "100"), ("-7.125e-3", "-0.007125"), ("42", "42"),
  ])
  func numbersKeepTheirDigits(_ text: String, _ written: String) throws {
    let value = JSONValue.object(["n": .number(text)])
    let encoded = String(decoding: try JSONCoding.encode(value), as: UTF8.self)
    #expect(encoded == #"{"n":\#(written)}"#)
    var sorted: [UInt8] = []
    try value.appendSortedJSON(to: &sorted)
    #expect(String(decoding: sorted, as: UTF8.self) == encoded)
    // Read back by Foundation, the same number again.
    #expect(
      try JSONCoding.decode(JSONValue.self, fromText: encoded) == .object(["n": .number(written)]))
  }

  @Test func aNumberNoWriterCanCarryIsFound() {
    #expect(
      JSONValue.array([.number("1.5"), .number("1e300"), .number("1e-400")]).numbersCanBeWritten)
    #expect(!JSONValue.object(["a": .array([.number("1e400")])]).numbersCanBeWritten)
    #expect(!JSONValue.number("-1e309").numbersCanBeWritten)
  }
}
