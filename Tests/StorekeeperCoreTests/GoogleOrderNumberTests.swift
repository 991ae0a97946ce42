import Testing

@testable import StorekeeperCore

@Suite struct GoogleOrderNumberTests {
  @Test func readsTheFirstOrderAndItsRenewals() {
    #expect(GoogleOrderNumber("GPA.3312-5551-2093-12345")?.renewal == -1)
    #expect(GoogleOrderNumber("GPA.3312-5551-2093-12345..0")?.renewal == 0)
    #expect(GoogleOrderNumber("GPA.3312-5551-2093-12345..12")?.base == "GPA.3312-5551-2093-12345")
    for other in ["", "12345", "GPA.1..x", "GPA.1..-1", "GPA.1..", "token:abc"] {
      #expect(GoogleOrderNumber(other) == nil, "\(other)")
    }
  }

  @Test func anUnknownOrderNumberedBeforeAKnownOnePrecedes() {
    let first = "GPA.1111-2222-3333-44444"
    #expect(GoogleOrderNumber.precedes(first, anyOf: [first + "..0", first + "..1"]))
    #expect(GoogleOrderNumber.precedes(first + "..0", anyOf: [first + "..1"]))
    // A lost renewal's push, then a later renewal: the lost one is before a known one.
    #expect(GoogleOrderNumber.precedes(first + "..0", anyOf: [first, first + "..1"]))
    #expect(GoogleOrderNumber.precedes(first + "..1", anyOf: [first + "..0", first + "..3"]))
    // After every known one, foreign or unreadable: it may be the latest.
    #expect(!GoogleOrderNumber.precedes(first + "..2", anyOf: [first + "..0"]))
    #expect(!GoogleOrderNumber.precedes(first + "..2", anyOf: [first, first + "..1"]))
    #expect(!GoogleOrderNumber.precedes(first, anyOf: [first]))
    #expect(!GoogleOrderNumber.precedes(first, anyOf: ["GPA.9999-2222-3333-44444..0"]))
    #expect(!GoogleOrderNumber.precedes(first, anyOf: ["opaque-id"]))
    #expect(!GoogleOrderNumber.precedes("opaque-id", anyOf: [first]))
    #expect(!GoogleOrderNumber.precedes(first, anyOf: []))
  }

  @Test func theRenewalsBetweenTheLastRecordedAndTheLatestAreMissing() {
    let first = "GPA.1111-2222-3333-44444"
    #expect(
      GoogleOrderNumber.missing(before: first + "..2", recorded: [first]) == [
        first + "..0", first + "..1",
      ])
    #expect(
      GoogleOrderNumber.missing(before: first + "..3", recorded: [first, first + "..1"]) == [
        first + "..2"
      ])
    // Next in line, before the last recorded, or not of a known subscription: none.
    #expect(GoogleOrderNumber.missing(before: first + "..0", recorded: [first]).isEmpty)
    #expect(GoogleOrderNumber.missing(before: first + "..1", recorded: [first + "..3"]).isEmpty)
    #expect(GoogleOrderNumber.missing(before: first + "..4", recorded: []).isEmpty)
    #expect(
      GoogleOrderNumber.missing(before: first + "..4", recorded: ["GPA.9999-2222-3333-44444"])
        .isEmpty)
    #expect(GoogleOrderNumber.missing(before: "opaque-id", recorded: [first]).isEmpty)
    // A number far past the recorded ones is no lost push.
    let far = GoogleOrderNumber.maxMissing
    #expect(GoogleOrderNumber.missing(before: first + "..\(far)", recorded: [first]).count == far)
    #expect(GoogleOrderNumber.missing(before: first + "..\(far + 1)", recorded: [first]).isEmpty)
  }
}
