import AppStore
import Foundation
import StorekeeperLogging
import Testing

@Suite struct ReceiptVerifierTests {
  static let production = URL(string: "https://apple.test/production")!
  static let sandbox = URL(string: "https://apple.test/sandbox")!
  static let receipt = "MIIT ab/c/A"  // a '+' became a space on the way

  func verifier(
    _ transport: ScriptedTransport, environments: Set<String> = ["Production", "Sandbox"],
    secret: String? = "s3cret"
  ) -> ReceiptVerifier {
    var configuration = AppStoreConfiguration(bundleId: Fixtures.bundleId)
    configuration.allowedEnvironments = environments
    configuration.verifyReceiptURL = Self.production
    configuration.verifyReceiptSandboxURL = Self.sandbox
    configuration.sharedSecret = secret
    return ReceiptVerifier(
      configuration: configuration, transport: transport,
      logger: Logger(label: "test", level: .critical))
  }

  @Test func acceptsAProductionReceiptAndNormalizesItsTransactions() async throws {
    let transport = ScriptedTransport { _ in (200, ScriptedTransport.appleAnswer(status: 0)) }
    let receipt = try #require(await verifier(transport).verify(receipt: Self.receipt).value)
    #expect(receipt.environment == "Production")
    #expect(receipt.bundleId == Fixtures.bundleId)
    #expect(receipt.latestReceipt == "TEFURVNU")
    #expect(
      receipt.transactions.map(\.transactionId) == ["1000000001", "1000000002", "1000000003"])
    let gold = receipt.transactions[0]
    #expect(gold.quantity == 3)
    #expect(gold.purchaseDate == 1_698_148_900_000)
    #expect(gold.appAccountToken == "6f1e9a3c-2b9d-4e4b-8a77-0c1d2e3f4a5b")
    #expect(gold.type == nil)
    let vip = receipt.transactions[1]  // latest_receipt_info's facts win
    #expect(vip.revocationDate == 1_699_000_000_000)
    #expect(vip.revocationReason == 1)
    #expect(vip.expiresDate == 1_700_740_900_000)
    #expect(receipt.transactions[2].originalTransactionId == "1000000002")
    #expect(receipt.transactions.map(\.isFamilyShared) == [false, false, true])

    #expect(transport.calls.map(\.url) == [Self.production])
    let body = try #require(
      try JSONSerialization.jsonObject(with: Data(transport.calls[0].body)) as? [String: Any])
    #expect(body["receipt-data"] as? String == "MIIT+ab/c/A=")
    #expect(body["password"] as? String == "s3cret")
    #expect(body["exclude-old-transactions"] as? Bool == false)
  }

  @Test func omitsThePasswordWithoutASharedSecret() async throws {
    let transport = ScriptedTransport { _ in (200, ScriptedTransport.appleAnswer(status: 0)) }
    _ = await verifier(transport, secret: nil).verify(receipt: Self.receipt)
    let body = try #require(
      try JSONSerialization.jsonObject(with: Data(transport.calls[0].body)) as? [String: Any])
    #expect(body["password"] == nil)
  }

  @Test func asksTheSandboxWhenProductionAnswers21007() async {
    let transport = ScriptedTransport { url in
      url == Self.production
        ? (200, ScriptedTransport.appleAnswer(status: 21007))
        : (200, ScriptedTransport.appleAnswer(status: 0, environment: "Sandbox"))
    }
    let result = await verifier(transport).verify(receipt: Self.receipt)
    #expect(result.value?.environment == "Sandbox")
    #expect(result.value?.transactions.allSatisfy { $0.environment == "Sandbox" } == true)
    #expect(transport.calls.map(\.url) == [Self.production, Self.sandbox])
  }

  @Test func neverAsksTheSandboxWhenSandboxIsNotAllowed() async {
    let transport = ScriptedTransport { _ in (200, ScriptedTransport.appleAnswer(status: 21007)) }
    let result = await verifier(transport, environments: ["Production"]).verify(
      receipt: Self.receipt)
    guard case .invalid(let reason) = result else {
      Issue.record("expected invalid, got \(result)")
      return
    }
    #expect(reason == "environment_not_allowed")
    #expect(transport.calls.count == 1)
  }

  @Test(
    arguments: [
      (21002, nil, "invalid"), (21003, nil, "invalid"), (21010, nil, "invalid"),
      (21001, nil, "invalid"), (21006, nil, "invalid"), (21005, nil, "retryable"),
      (21005, true, "retryable"),
      (21005, false, "invalid"), (21009, nil, "retryable"), (21100, true, "retryable"),
      (21150, false, "invalid"),
      (21199, nil, "retryable"),
    ] as [(Int, Bool?, String)])
  func mapsApplesStatusCodes(status: Int, retryable: Bool?, expected: String) async {
    let transport = ScriptedTransport { _ in
      (200, ScriptedTransport.appleAnswer(status: status, retryable: retryable))
    }
    let result = await verifier(transport).verify(receipt: Self.receipt)
    switch (result, expected) {
    case (.invalid(let reason), "invalid"), (.retryable(let reason), "retryable"):
      #expect(reason == "verify_receipt_\(status)")
    default:
      Issue.record(
        "status \(status) (is-retryable \(String(describing: retryable))) gave \(result)")
    }
  }

  @Test func a21002IsRetryableForAReceiptAppleIsKnownToHaveSigned() async {
    // Apple: "malformed or the service experienced a temporary issue"; a receipt whose
    // signature chains to Apple cannot be malformed, so only the second is left.
    let transport = ScriptedTransport { _ in (200, ScriptedTransport.appleAnswer(status: 21002)) }
    let signed = await verifier(transport).verify(receipt: Self.receipt, appleSigned: true)
    #expect(signed == .retryable("verify_receipt_21002"))
    let unknown = await verifier(transport).verify(receipt: Self.receipt)
    #expect(unknown == .invalid("verify_receipt_21002"))
  }

  @Test func refusesAnotherAppsReceipt() async {
    let transport = ScriptedTransport { _ in
      (200, ScriptedTransport.appleAnswer(status: 0, bundleId: "com.other"))
    }
    #expect(await verifier(transport).verify(receipt: Self.receipt).reason == "bundle_id_mismatch")
  }

  @Test func refusesASandboxReceiptApproachedDirectlyWhenSandboxIsNotAllowed() async {
    let transport = ScriptedTransport { _ in
      (200, ScriptedTransport.appleAnswer(status: 0, environment: "Sandbox"))
    }
    let result = await verifier(transport, environments: ["Production"]).verify(
      receipt: Self.receipt)
    #expect(result.reason == "environment_not_allowed")
  }

  @Test func treatsServerErrorsAndTransportFailuresAsRetryable() async {
    let failures: [(@Sendable (URL) throws -> (status: Int, body: [UInt8]), String)] = [
      ({ _ in (503, []) }, "verify_receipt_http_503"),
      ({ _ in throw ReceiptTransportError.timedOut }, "verify_receipt_timeout"),
      (
        { _ in throw ReceiptTransportError.connectionFailed("refused") },
        "verify_receipt_unreachable"
      ),
      ({ _ in (200, Array("<html>".utf8)) }, "verify_receipt_bad_response"),
    ]
    for (answer, reason) in failures {
      let result = await verifier(ScriptedTransport(answer)).verify(receipt: Self.receipt)
      guard case .retryable(let got) = result else {
        Issue.record("expected retryable \(reason), got \(result)")
        continue
      }
      #expect(got == reason)
    }
  }

  @Test func refusesMalformedReceiptsWithoutCallingApple() async {
    let transport = ScriptedTransport { _ in (200, ScriptedTransport.appleAnswer(status: 0)) }
    let verifier = verifier(transport)
    for receipt in [
      "", "not base64!", String(repeating: "A", count: ReceiptData.maximumLength + 4),
    ] {
      let result = await verifier.verify(receipt: receipt)
      #expect(result.value == nil)
      #expect(result.reason == "malformed_receipt")
    }
    #expect(transport.calls.isEmpty)
  }
}
