import HTTP
import StorekeeperLogging
import Testing

/// SO_REUSEPORT spreads connections over the loops, but must not let a second process (or
/// server) quietly share a port that is already being served.
@Suite struct PortInUseTests {
  @Test func aSecondServerOnAPortInUseFailsToStart() async throws {
    try await withServer { port, _ in
      var configuration = ServerConfiguration()
      configuration.port = port
      configuration.eventLoopCount = 2
      let second = HTTPServer(
        configuration: configuration, router: liveRouter(),
        logger: Logger(label: "test", level: .critical))
      #expect(throws: (any Error).self) { _ = try second.start() }
    }
  }
}
