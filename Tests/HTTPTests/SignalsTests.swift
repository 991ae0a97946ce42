import Glibc
import Testing

@testable import HTTP

@Suite struct SignalsTests {
  @Test func returnsTheSignalThatArrived() async throws {
    let waiting = Task { await Signals.wait(for: [SIGUSR2]) }
    // The source may not be installed yet when the first signal is sent (it is ignored
    // until then), so keep sending until the wait returns.
    let sender = Task {
      while !Task.isCancelled {
        kill(getpid(), SIGUSR2)
        try? await Task.sleep(for: .milliseconds(20))
      }
    }
    let received = await waiting.value
    sender.cancel()
    #expect(received == SIGUSR2)
  }
}
