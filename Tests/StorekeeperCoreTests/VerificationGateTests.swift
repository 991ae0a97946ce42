import Synchronization
import Testing

@testable import StorekeeperCore

@Suite struct VerificationGateTests {
  /// The order `waitersAreAdmittedInTheOrderTheyCame`'s waiters got their slot in (a static:
  /// a local would be sent to each waiter's task).
  private static let admitted = Mutex<[Int]>([])

  /// Waits (without asserting on time) until `count` tasks wait for a slot of `lane`.
  static func untilWaiting(_ gate: VerificationGate, _ lane: VerificationGate.Lane, _ count: Int)
    async
  {
    while gate.waiting(lane) < count { try? await Task.sleep(for: .milliseconds(2)) }
  }

  @Test func aFreeSlotIsTakenAtOnceAndAFullLaneIsOnlyTried() async throws {
    let gate = VerificationGate(cpu: 1, apple: 2, google: 1)
    #expect(gate.tryEnter(.apple) && gate.tryEnter(.apple))
    #expect(!gate.tryEnter(.apple))
    #expect(await gate.ifFree(.apple, { 1 }) == nil)
    #expect(gate.tryEnter(.cpu))
    gate.leave(.apple)
    #expect(await gate.ifFree(.apple, { 7 }) == 7)
    #expect(gate.inUse(.apple) == 1)
  }

  @Test func waitersAreAdmittedInTheOrderTheyCame() async throws {
    let gate = VerificationGate(
      cpu: 1, apple: 1, google: 1, queueLength: 8, queueTimeout: .seconds(60))
    #expect(gate.tryEnter(.cpu))
    var waiters: [Task<Void, any Error>] = []
    for i in 0..<4 {
      waiters.append(
        Task {
          try await gate.withQueuedSlot(.cpu) { Self.admitted.withLock { $0.append(i) } }
        })
      await Self.untilWaiting(gate, .cpu, i + 1)
    }
    gate.leave(.cpu)
    for waiter in waiters { try await waiter.value }
    #expect(Self.admitted.withLock { $0 } == [0, 1, 2, 3])
    #expect(gate.inUse(.cpu) == 0 && gate.waiting(.cpu) == 0)
  }

  @Test func aRequestPastTheQueueLengthIsRefusedAtOnceWithRetryAfter() async throws {
    let gate = VerificationGate(
      cpu: 1, apple: 1, google: 1, queueLength: 1, queueTimeout: .seconds(30))
    #expect(gate.tryEnter(.cpu))
    let first = Task { try await gate.withQueuedSlot(.cpu) { "first" } }
    await Self.untilWaiting(gate, .cpu, 1)
    await #expect(throws: VerificationBusy(lane: .cpu, retryAfterSeconds: 30)) {
      try await gate.admit(.cpu)
    }
    gate.leave(.cpu)
    #expect(try await first.value == "first")
    #expect(gate.inUse(.cpu) == 0)
    #expect(
      gate.counts(.cpu)
        == .init(admittedAfterWaiting: 1, refusedFull: 1, refusedWaiting: 0, peakWaiting: 1))
    #expect(gate.lines.contains("storekeeper_verification_refused_total{lane=\"cpu\"} 1"))
  }

  @Test func aWaiterIsRefusedAfterTheQueueTimeoutAndLeavesTheQueue() async throws {
    let gate = VerificationGate(
      cpu: 1, apple: 1, google: 1, queueLength: 4, queueTimeout: .milliseconds(50))
    #expect(gate.tryEnter(.cpu))
    await #expect(throws: VerificationBusy(lane: .cpu, retryAfterSeconds: 1)) {
      try await gate.admit(.cpu)
    }
    #expect(gate.waiting(.cpu) == 0 && gate.inUse(.cpu) == 1)
    #expect(gate.counts(.cpu).refusedWaiting == 1)
    // The slot its holder frees is free again, not handed to the one that left.
    gate.leave(.cpu)
    #expect(gate.inUse(.cpu) == 0)
  }

  @Test func aCancelledWaiterLeavesTheQueueAndThoseBehindMoveUp() async throws {
    let gate = VerificationGate(
      cpu: 1, apple: 1, google: 1, queueLength: 4, queueTimeout: .seconds(60))
    #expect(gate.tryEnter(.cpu))
    let gone = Task { try await gate.admit(.cpu) }
    await Self.untilWaiting(gate, .cpu, 1)
    let next = Task { try await gate.withQueuedSlot(.cpu) { gate.waiting(.cpu) } }
    await Self.untilWaiting(gate, .cpu, 2)
    gone.cancel()
    await #expect(throws: VerificationBusy.self) { try await gone.value }
    #expect(gate.waiting(.cpu) == 1)
    gate.leave(.cpu)
    #expect(try await next.value == 0)
    #expect(gate.inUse(.cpu) == 0)
  }

  @Test func withoutAQueueARequestIsRefusedAtOnceButBackgroundWorkWaits() async throws {
    let gate = VerificationGate(cpu: 1, apple: 1, google: 1, queueLength: 0)
    #expect(gate.tryEnter(.apple))
    await #expect(throws: VerificationBusy(lane: .apple, retryAfterSeconds: 1)) {
      try await gate.admit(.apple)
    }
    let worker = Task { await gate.waitingForSlot(.apple) { gate.inUse(.apple) } }
    await Self.untilWaiting(gate, .apple, 1)
    gate.leave(.apple)
    #expect(await worker.value == 1)
    #expect(gate.inUse(.apple) == 0)
  }

  @Test func aWaitForAnAppleSlotRunsOnceOneIsFreeAndGivesUpPastTheTimeout() async throws {
    let gate = VerificationGate(
      cpu: 1, apple: 1, google: 1, queueLength: 1, queueTimeout: .seconds(60))
    #expect(gate.tryEnter(.apple))
    let waiter = Task { await gate.afterWaiting(.apple) { "asked" } }
    await Self.untilWaiting(gate, .apple, 1)
    // Full, and its queue too: refused before anything would be stored.
    #expect(throws: VerificationBusy(lane: .apple, retryAfterSeconds: 60)) {
      try gate.requireRoom(.apple)
    }
    gate.leave(.apple)
    #expect(await waiter.value == "asked")
    #expect(gate.inUse(.apple) == 0)
    try gate.requireRoom(.apple)

    let brief = VerificationGate(
      cpu: 1, apple: 1, google: 1, queueLength: 1, queueTimeout: .milliseconds(50))
    #expect(brief.tryEnter(.apple))
    #expect(await brief.afterWaiting(.apple) { "asked" } == nil)
    #expect(brief.waiting(.apple) == 0 && brief.inUse(.apple) == 1)
    #expect(brief.counts(.apple).refusedWaiting == 1)
  }
}

extension VerificationGateTests {
  @Test func googleCallsHaveALaneOfTheirOwnThatRequestsOnlyTry() async throws {
    let gate = VerificationGate(cpu: 1, apple: 1, google: 2, queueLength: 8)
    #expect(gate.tryEnter(.google) && gate.tryEnter(.google))
    // A full Google lane leaves Apple's slot free, and a request past it is not run.
    #expect(await gate.ifFree(.google, { 1 }) == nil)
    #expect(await gate.ifFree(.apple, { 2 }) == 2)
    #expect(gate.inUse(.apple) == 0 && gate.waiting(.google) == 0)
    // The retry worker waits for the next free one.
    let worker = Task { await gate.waitingForSlot(.google) { gate.inUse(.google) } }
    await Self.untilWaiting(gate, .google, 1)
    #expect(gate.lines.contains("storekeeper_verification_waiting{lane=\"google\"} 1"))
    gate.leave(.google)
    #expect(await worker.value == 2)
    gate.leave(.google)
    #expect(gate.inUse(.google) == 0)
    #expect(gate.lines.contains("storekeeper_verification_in_use{lane=\"google\"} 0"))
  }
}
