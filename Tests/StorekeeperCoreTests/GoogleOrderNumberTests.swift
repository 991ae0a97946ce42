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

  @Test func onlyAnEarlierOrderOfTheSameSubscriptionPrecedes() {
    let first = "GPA.1111-2222-3333-44444"
    #expect(GoogleOrderNumber.precedes(first, all: [first + "..0", first + "..1"]))
    #expect(GoogleOrderNumber.precedes(first + "..0", all: [first + "..1"]))
    // Later, equal, mixed, foreign or unreadable: not known to be earlier.
    #expect(!GoogleOrderNumber.precedes(first + "..2", all: [first + "..0"]))
    #expect(!GoogleOrderNumber.precedes(first + "..1", all: [first + "..0", first + "..3"]))
    #expect(!GoogleOrderNumber.precedes(first, all: [first]))
    #expect(!GoogleOrderNumber.precedes(first, all: ["GPA.9999-2222-3333-44444..0"]))
    #expect(!GoogleOrderNumber.precedes(first, all: ["opaque-id"]))
    #expect(!GoogleOrderNumber.precedes("opaque-id", all: [first]))
    #expect(!GoogleOrderNumber.precedes(first, all: []))
  }
}
