import Testing

@testable import Storekeeper

@Suite struct VerificationGateTests {
  @Test func eachLaneHoldsAtMostItsLimitAndRefusesAtOnce() async throws {
    let gate = VerificationGate(offline: 1, apple: 2)
    #expect(gate.tryEnter(.apple) && gate.tryEnter(.apple))
    #expect(!gate.tryEnter(.apple))
    #expect(gate.tryEnter(.offline))
    await #expect(throws: VerificationBusy(lane: .apple)) {
      try await gate.withSlot(for: .receipt) { 1 }
    }
    gate.leave(.apple)
    #expect(try await gate.withSlot(for: .receipt) { 7 } == 7)
    #expect(gate.inUse(.apple) == 1)
  }

  @Test func aWaiterGetsTheNextFreedSlot() async {
    let gate = VerificationGate(offline: 1, apple: 1)
    #expect(gate.tryEnter(.apple))
    let waiter = Task { await gate.waitingForSlot(for: .receipt) { gate.inUse(.apple) } }
    try? await Task.sleep(for: .milliseconds(50))
    gate.leave(.apple)
    #expect(await waiter.value == 1)
    #expect(gate.inUse(.apple) == 0)
  }
}
