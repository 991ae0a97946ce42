import AppStore
import FakeAppStore
import FakeAppStoreTestSupport
import Foundation
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

@Suite struct FakeFaultTests {
  /// Short only where the timeout is what is tested; generous elsewhere, so a loaded machine
  /// cannot turn a 503 or a 21005 into a timeout.
  static func timeout(for mode: String) -> Duration {
    mode == "timeout" ? .seconds(1) : .seconds(20)
  }

  /// Each fault mode and the reason the AppStore module's `retryable` outcome gives for it.
  /// The timeout holds for 60 s against a client that waits 1 s (FoundationNetworking truncates
  /// timeouts to whole seconds); the fake's shutdown ends a hold at once, so it costs nothing.
  static let modes: [(mode: String, reason: String)] = [
    ("timeout", "verify_receipt_timeout"),
    ("http503", "verify_receipt_http_503"),
    ("status21005", "verify_receipt_21005"),
    ("retryable", "verify_receipt_21199"),
  ]

  @Test(arguments: modes)
  func aFaultForOneRequestIsRetryableThenTheReceiptVerifies(mode: String, reason: String)
    async throws
  {
    try await FakeHarness.with { fake in
      let receipt = try #require(try await fake.purchase().string("receipt"))
      let set = try await fake.post(
        "fake/v1/faults", ["mode": mode, "count": 1, "delay_ms": 60_000])
      #expect(set.status == 200)
      #expect(set.string("mode") == mode)
      // The timeout needs a transport that honours it (see FakeTestTransport).
      let transport: any ReceiptTransport =
        mode == "timeout" ? FakeTestTransport(headers: [:]) : HTTPReceiptTransport()
      let verifier = try fake.receiptVerifier(
        timeout: Self.timeout(for: mode), transport: transport)
      #expect(await verifier.verify(receipt: receipt) == .retryable(reason))
      // The fault is spent: the next request verifies. The follow-up may take 20 s, so a loaded
      // machine does not turn a plain answer into another timeout, while a fault still in force
      // (held 60 s) would.
      let after = try fake.receiptVerifier(timeout: .seconds(20), transport: transport)
      #expect(await after.verify(receipt: receipt).value != nil)
    }
  }

  @Test(arguments: modes)
  func theFaultHeaderForcesAModeForOneRequestOnly(mode: String, reason: String) async throws {
    try await FakeHarness.with { fake in
      let receipt = try #require(try await fake.purchase().string("receipt"))
      let faulty = try fake.receiptVerifier(
        timeout: Self.timeout(for: mode),
        transport: FakeTestTransport(headers: ["X-Fake-Fault": mode, "X-Fake-Delay-Ms": "10000"]))
      #expect(await faulty.verify(receipt: receipt) == .retryable(reason))
      #expect(try await fake.receiptVerifier().verify(receipt: receipt).value != nil)
    }
  }

  @Test func theHeaderNoneOverridesAGlobalFault() async throws {
    try await FakeHarness.with { fake in
      let receipt = try #require(try await fake.purchase().string("receipt"))
      _ = try await fake.post("fake/v1/faults", ["mode": "http503"])
      let clean = try fake.receiptVerifier(
        transport: FakeTestTransport(headers: ["X-Fake-Fault": "none"]))
      #expect(await clean.verify(receipt: receipt).value != nil)
    }
  }

  @Test func aFaultWithoutLimitsLastsUntilCleared() async throws {
    try await FakeHarness.with { fake in
      let receipt = try #require(try await fake.purchase().string("receipt"))
      _ = try await fake.post("fake/v1/faults", ["mode": "status21005"])
      let verifier = try fake.receiptVerifier()
      for _ in 0..<3 {
        #expect(await verifier.verify(receipt: receipt) == .retryable("verify_receipt_21005"))
      }
      let cleared = try await fake.post("fake/v1/faults", ["mode": "none"])
      #expect(cleared.string("mode") == "none")
      #expect(await verifier.verify(receipt: receipt).value != nil)
    }
  }

  @Test func getShowsTheFaultAndItsRemainingCount() async throws {
    try await FakeHarness.with { fake in
      let receipt = try #require(try await fake.purchase().string("receipt"))
      #expect(try await fake.get("fake/v1/faults").string("mode") == "none")
      _ = try await fake.post("fake/v1/faults", ["mode": "retryable", "count": 2])
      #expect(try await fake.get("fake/v1/faults")["remaining_count"] as? Int == 2)
      _ = try await fake.verifyReceiptRaw(receipt)
      #expect(try await fake.get("fake/v1/faults")["remaining_count"] as? Int == 1)
      let hit = try await fake.verifyReceiptRaw(receipt)
      #expect(hit["status"] as? Int == 21199)
      #expect(hit["is_retryable"] as? Bool == true)
      #expect(try await fake.get("fake/v1/faults").string("mode") == "none")
      #expect(try await fake.verifyReceiptRaw(receipt)["status"] as? Int == 0)
    }
  }

  @Test func aFaultForSomeSecondsEndsByItself() async throws {
    try await FakeHarness.with { fake in
      let set = try await fake.post("fake/v1/faults", ["mode": "http503", "seconds": 0.2])
      #expect(set["expires_at_ms"] as? Int64 != nil)
      try await Task.sleep(for: .milliseconds(400))
      #expect(try await fake.get("fake/v1/faults").string("mode") == "none")
    }
  }

  @Test func unknownModesAreRefused() async throws {
    try await FakeHarness.with { fake in
      let body = try await fake.post("fake/v1/faults", ["mode": "explode"])
      #expect(body.status == 422)
      #expect(body.string("code") == "invalid_field")
      let header = try await fake.send(
        "POST", "verifyReceipt", body: Data("{}".utf8), headers: ["X-Fake-Fault": "explode"])
      #expect(header.status == 400)
      #expect(header.string("code") == "unknown_fault")
    }
  }

  @Test func shutdownReleasesAHeldAnswerInsteadOfDroppingIt() async throws {
    var configuration = FakeAppStoreServer.Configuration()
    configuration.logger = FakeHarness.quiet
    // What is asserted is that the held answer is released, not how fast: on a loaded machine
    // (the whole suite at once) writing it took longer than the fake's 2 s.
    configuration.shutdownGracePeriod = .seconds(30)
    let server = try FakeAppStoreServer(configuration: configuration)
    try server.start()
    let fake = FakeHarness(server: server, base: try #require(server.baseURL))
    let held = Task {
      try await fake.send(
        "POST", "verifyReceipt", body: Data("{}".utf8),
        headers: ["X-Fake-Fault": "timeout", "X-Fake-Delay-Ms": "600000"])
    }
    var holding = 0
    for _ in 0..<200 where holding == 0 {
      holding = try await fake.get("fake/v1/faults")["held_requests"] as? Int ?? 0
      if holding == 0 { try await Task.sleep(for: .milliseconds(10)) }
    }
    #expect(holding == 1)
    await server.shutdown()
    // Released, the request is answered normally ({} is not a receipt: 21002) before the
    // server closes its connections.
    let reply = try await held.value
    #expect(reply.status == 200)
    #expect(reply["status"] as? Int == 21002)
  }

  @Test func urlSessionReceiptTransportHonoursTheConfiguredTimeout() async throws {
    try await FakeHarness.with { fake in
      let receipt = try #require(try await fake.purchase().string("receipt"))
      let verifier = try fake.receiptVerifier(timeout: .seconds(1))
      // Held 3 s against a 1 s timeout: a transport that honours it gives up first.
      let slow = FakeTestTransport(headers: ["X-Fake-Fault": "timeout", "X-Fake-Delay-Ms": "3000"])
      #expect(
        try await fake.receiptVerifier(timeout: .seconds(1), transport: slow).verify(
          receipt: receipt)
          == .retryable("verify_receipt_timeout"))
      _ = try await fake.post("fake/v1/faults", ["mode": "timeout", "count": 1, "delay_ms": 3000])
      // The production transport enforces its own deadline (FoundationNetworking does not).
      #expect(await verifier.verify(receipt: receipt) == .retryable("verify_receipt_timeout"))
    }
  }
}

/// The URLSession transport with fixed headers added (the fake's per-request fault switch).
struct FakeTestTransport: ReceiptTransport {
  var headers: [String: String]
  private let transport = HTTPReceiptTransport()

  init(headers: [String: String]) { self.headers = headers }

  func post(url: URL, body: [UInt8], headers extra: [String: String], timeout: Duration)
    async throws -> (status: Int, body: [UInt8])
  {
    try await transport.post(
      url: url, body: body, headers: headers.merging(extra) { $1 }, timeout: timeout)
  }
}
