import Testing

@testable import StorekeeperAPI
@testable import StorekeeperCore

/// A body of many unknown fields is answered with a bounded problem: the first twenty named,
/// the twenty-first counting the rest.
@Suite struct UnknownFieldsTests {
  @Test func atMostTwentyOneUnknownFieldsAreReported() {
    var values: [String: JSONValue] = ["known": .string("x")]
    for index in 0..<5_000 { values["u\(100_000 + index)"] = .number("0") }
    var fields = RequestFields(values: values)
    fields.rejectUnknown(allowed: ["known"])
    #expect(fields.errors.count == 21)
    #expect(fields.errors.first?.field == "u100000")
    #expect(fields.errors.last?.message == "is not a known field, nor are 4979 more")
    var few = RequestFields(values: ["b": .null, "a": .null, "known": .null])
    few.rejectUnknown(allowed: ["known"])
    #expect(few.errors.map(\.field) == ["a", "b"])
  }
}
