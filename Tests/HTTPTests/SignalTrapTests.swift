import Glibc
import Testing

@testable import HTTP

@Suite struct SignalTrapTests {
  /// The trap must be made before the first signal: until then the default action (terminate)
  /// applies, which is exactly why the server makes it before announcing readiness.
  @Test func returnsTheSignalThatArrivedAfterItWasMade() async {
    let trap = SignalTrap([SIGUSR2])
    // Dispatch installs its source asynchronously; a signal sent before that is ignored
    // (SIG_IGN is set synchronously), so keep sending until the wait returns.
    let sender = Task {
      while !Task.isCancelled {
        kill(getpid(), SIGUSR2)
        try? await Task.sleep(for: .milliseconds(20))
      }
    }
    let received = await trap.wait()
    sender.cancel()
    #expect(received == SIGUSR2)
  }

  @Test func aSignalCaughtBeforeWaitingIsNotLost() async throws {
    let trap = SignalTrap([SIGUSR1])
    // Up to a minute on a loaded machine; done as soon as the signal is caught.
    let deadline = ContinuousClock.now + .seconds(60)
    while trap.caught == nil, ContinuousClock.now < deadline {
      kill(getpid(), SIGUSR1)
      try await Task.sleep(for: .milliseconds(20))
    }
    try #require(trap.caught == SIGUSR1)
    #expect(await trap.wait() == SIGUSR1)
  }
}
