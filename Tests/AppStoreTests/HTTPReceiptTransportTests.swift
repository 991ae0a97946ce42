import AppStore
import Foundation
import StorekeeperLogging
import Testing

/// The production transport over real sockets, against a local HTTP server.
@Suite final class HTTPReceiptTransportTests {
  let server: FakeVerifyReceiptServer

  init() async throws {
    server = try await FakeVerifyReceiptServer.start(bundleId: Fixtures.bundleId)
  }

  func verifier(production: String, sandbox: String = "/sandbox", timeout: Duration = .seconds(10))
    -> ReceiptVerifier
  {
    var configuration = AppStoreConfiguration(bundleId: Fixtures.bundleId)
    configuration.allowedEnvironments = ["Production", "Sandbox"]
    configuration.verifyReceiptURL = server.url(production)
    configuration.verifyReceiptSandboxURL = server.url(sandbox)
    configuration.receiptTimeout = timeout
    return ReceiptVerifier(
      configuration: configuration, transport: HTTPReceiptTransport(),
      logger: Logger(label: "test", level: .critical))
  }

  @Test func followsProductionToSandboxOverHTTP() async {
    // "QUJD A" arrives with its '+' turned into a space; the server insists on "QUJD+A==".
    let result = await verifier(production: "/production").verify(receipt: "QUJD A")
    #expect(result.value?.environment == "Sandbox")
    #expect(result.value?.transactions.map(\.transactionId) == ["7"])
  }

  @Test func reportsAServerErrorAsRetryable() async {
    let result = await verifier(production: "/broken").verify(receipt: "QUJD A")
    guard case .retryable(let reason) = result else {
      Issue.record("expected retryable, got \(result)")
      return
    }
    #expect(reason == "verify_receipt_http_500")
  }

  @Test func givesUpAfterTheTimeout() async {
    let result = await verifier(production: "/slow", timeout: .milliseconds(500)).verify(
      receipt: "QUJD A")
    guard case .retryable(let reason) = result else {
      Issue.record("expected retryable, got \(result)")
      return
    }
    #expect(reason == "verify_receipt_timeout")
  }

  @Test func reportsARefusedConnectionAsRetryable() async {
    var configuration = AppStoreConfiguration(bundleId: Fixtures.bundleId)
    configuration.verifyReceiptURL = URL(string: "http://127.0.0.1:1/verifyReceipt")!
    let verifier = ReceiptVerifier(
      configuration: configuration, logger: Logger(label: "test", level: .critical))
    let result = await verifier.verify(receipt: "QUJD A")
    guard case .retryable(let reason) = result else {
      Issue.record("expected retryable, got \(result)")
      return
    }
    #expect(reason == "verify_receipt_unreachable")
  }
}
