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

}
