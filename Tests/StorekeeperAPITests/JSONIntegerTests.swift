import Testing

@testable import StorekeeperAPI
@testable import StorekeeperCore

@Suite struct JSONIntegerTests {
  @Test func acceptsEveryWayOfWritingAWholeNumber() {
    let cases: [(String, Int64)] = [
      ("4", 4), ("4.0", 4), ("4.00", 4), ("4e0", 4), ("4E+0", 4), ("40e-1", 4), ("0.4e1", 4),
      ("-3.0", -3), ("0", 0), ("-0", 0), ("0.0", 0), ("0e-999999999999999999999", 0),
      ("1e3", 1000), ("100000e-5", 1), ("9223372036854775807", .max),
      ("-9223372036854775808", .min), ("-9223372036854775808.000", .min),
      ("9.223372036854775807e18", .max),
    ]
    for (text, value) in cases {
      #expect(JSONInteger(text) == .value(value), "\(text)")
    }
  }

  @Test func refusesFractions() {
    for text in ["4.5", "0.1", "1e-1", "-2.25", "12345e-3", "1e-999999999999999999999"] {
      #expect(JSONInteger(text) == .notAnInteger, "\(text)")
    }
  }

  @Test func tellsWholeNumbersBeyond64BitsApart() {
    for text in ["9223372036854775808", "1e19", "1e400", "1e999999999999999999999", "-1e19"] {
      #expect(JSONInteger(text) == .outOfRange, "\(text)")
    }
  }

  /// A client writes the number (up to the body's 1 MiB): reading it is linear in its length.
  /// Reading a run of zeros was quadratic (32,000 zeros took 45 s of a debug build's CPU).
  @Test func aNumberOfSixtyFourThousandDigitsIsReadInOnePass() {
    let zeros = String(repeating: "0", count: 64_000)
    #expect(JSONInteger("1" + zeros) == .outOfRange)
    #expect(JSONInteger("1." + zeros) == .value(1))
    #expect(JSONInteger("1" + zeros + "e-64000") == .value(1))
    #expect(JSONInteger("0." + zeros + "1") == .notAnInteger)
    #expect(JSONInteger("-" + zeros + "7.0" + zeros) == .value(-7))
  }

  @Test func requestFieldsReadIntegralNumbersAsIntegers() {
    var fields = RequestFields(values: ["quantity": .number("4.0"), "bad": .number("4.5")])
    #expect(fields.integer("quantity", range: 1...10) == 4)
    #expect(fields.errors.isEmpty)
    #expect(fields.integer("bad", range: 1...10) == nil)
    #expect(fields.errors.map(\.message) == ["must be an integer"])
  }
}
