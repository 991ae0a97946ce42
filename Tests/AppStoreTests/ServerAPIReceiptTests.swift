import AppStore
import FakeAppStore
import FakeAppStoreTestSupport
import Foundation
import Testing

/// A StoreKit 1 app receipt judged without verifyReceipt: `TransactionLookupClient` and
/// `ServerAPIReceiptVerifier` against the fake's Get Transaction Info / History over real
/// sockets — pagination, the sandbox after production's 404, a refused key, an unknown
/// transaction, Apple down.
@Suite struct ServerAPIReceiptTests {
  static func client(_ fake: FakeHarness, pem: String? = nil) throws -> TransactionLookupClient {
    let key = try #require(
      AppStoreAPIKey(
        pem: pem ?? fake.server.apiPrivateKeyPEM, keyId: fake.server.configuration.apiKeyId,
        issuerId: fake.server.configuration.apiIssuerId))
    return TransactionLookupClient(
      key: key, bundleId: FakeHarness.bundleId, timeout: FakeHarness.patientTimeout)
  }

  static func verifier(
    _ fake: FakeHarness, pem: String? = nil, environments: Set<String> = ["Production", "Sandbox"]
  ) throws -> ServerAPIReceiptVerifier {
    ServerAPIReceiptVerifier(
      client: try client(fake, pem: pem),
      signed: try fake.signedDataVerifier(environments: environments),
      productionURL: fake.base, sandboxURL: fake.base.appendingPathComponent("sandbox"),
      logger: FakeHarness.quiet)
  }

  /// The receipt as the server judges it: its signature first, then the Server API.
  static func judge(
    _ receipt: String, by verifier: ServerAPIReceiptVerifier, trusting fakes: [FakeHarness]
  ) async throws -> VerificationResult<VerifiedReceipt>? {
    var configuration = try #require(fakes.first).appStoreConfiguration()
    configuration.extraRootCertificatesPEM = fakes.map(\.server.rootCertificatePEM)
    guard
      case .signed(let signed) = try AppReceiptSignatureVerifier(configuration: configuration)
        .check(base64: receipt)
    else { return nil }
    return await verifier.verify(signed)
  }

  static func judge(
    _ receipt: String, _ fake: FakeHarness, verifier: ServerAPIReceiptVerifier? = nil
  )
    async throws -> VerificationResult<VerifiedReceipt>?
  {
    try await judge(receipt, by: verifier ?? Self.verifier(fake), trusting: [fake])
  }

  static func calls(_ fake: FakeHarness) async throws -> [String: Int] {
    try await fake.get("fake/v1/calls").json.compactMapValues { $0 as? Int }
  }

  @Test func walksEveryHistoryPageAndSettlesTheReceiptsTransactions() async throws {
    try await FakeHarness.with({ $0.transactionHistoryPageSize = 2 }) { fake in
      var ids: [String] = []
      var receipt = ""
      for index in 0..<5 {
        let reply = try await fake.purchase([
          "apple_account": "erin", "purchase_date_ms": 1_700_000_000_000 + index * 1000,
        ])
        ids.append(try #require(reply.string("transaction_id")))
        receipt = try #require(reply.string("receipt"))
      }
      let other = try await fake.purchase(["apple_account": "frank"])

      // The client alone: three pages of two, newest first, `revision` carrying on.
      let client = try Self.client(fake)
      var seen: [String] = []
      var revision: String?
      var pages = 0
      repeat {
        let page = try await client.historyPage(ids[2], revision: revision, at: fake.base).get()
        pages += 1
        #expect(page.bundleId == FakeHarness.bundleId && page.environment == "Production")
        #expect(page.signedTransactions.count <= 2)
        seen += try page.signedTransactions.map {
          try #require(decodedPayload($0)["transactionId"] as? String)
        }
        revision = page.hasMore ? page.revision : nil
      } while revision != nil && pages < 10
      #expect(pages == 3)
      #expect(seen == ids.reversed())

      let before = try await Self.calls(fake)
      let outcome = try await Self.judge(receipt, fake)
      guard case .valid(let verified)? = outcome else {
        Issue.record("expected a valid receipt, got \(outcome)")
        return
      }
      #expect(verified.transactions.map(\.transactionId) == ids)
      #expect(verified.environment == "Production" && verified.bundleId == FakeHarness.bundleId)
      #expect(
        !verified.transactions.contains { $0.transactionId == other.string("transaction_id") })
      let after = try await Self.calls(fake)
      #expect(after["verify_receipt"] == before["verify_receipt"])
      #expect((after["transaction_history"] ?? 0) - (before["transaction_history"] ?? 0) == 3)
    }
  }

  @Test func aLongHistoryPastTheCallLimitStillConfirmsTheNewestPurchase() async throws {
    // Ten purchases, pages of one, six calls: three pages of history and three lookups. The
    // limit leaves the oldest out (long since recorded), never the purchase being reported.
    try await FakeHarness.with({ $0.transactionHistoryPageSize = 1 }) { fake in
      var ids: [String] = []
      var receipt = ""
      for index in 0..<10 {
        let reply = try await fake.purchase([
          "apple_account": "gwen", "purchase_date_ms": 1_700_000_000_000 + index * 1000,
        ])
        ids.append(try #require(reply.string("transaction_id")))
        receipt = try #require(reply.string("receipt"))
      }
      let limited = ServerAPIReceiptVerifier(
        client: try Self.client(fake), signed: try fake.signedDataVerifier(),
        productionURL: fake.base, sandboxURL: fake.base.appendingPathComponent("sandbox"),
        callLimit: 6, logger: FakeHarness.quiet)
      let outcome = try await Self.judge(receipt, fake, verifier: limited)
      guard case .valid(let verified)? = outcome else {
        Issue.record("expected a valid receipt, got \(outcome)")
        return
      }
      #expect(verified.transactions.map(\.transactionId) == Array(ids.suffix(6)))
    }
  }

  @Test func aSandboxReceiptIsFoundInTheSandboxAfterProductionsNotFound() async throws {
    try await FakeHarness.with { fake in
      let reply = try await fake.purchase(["environment": "Sandbox"])
      let receipt = try #require(reply.string("receipt"))
      let outcome = try await Self.judge(receipt, fake)
      guard case .valid(let verified)? = outcome else {
        Issue.record("expected a valid receipt, got \(outcome)")
        return
      }
      #expect(verified.environment == "Sandbox")
      #expect(verified.transactions.map(\.transactionId) == [reply.string("transaction_id")])
      let productionOnly = try Self.verifier(fake, environments: ["Production"])
      #expect(
        try await Self.judge(receipt, fake, verifier: productionOnly)
          == .invalid("server_api_transaction_not_found"))
    }
  }

  @Test func aKeyAppleRefusesIsTheOperatorsMisconfiguration() async throws {
    try await FakeHarness.with { other in
      try await FakeHarness.with { fake in
        let receipt = try #require(try await fake.purchase().string("receipt"))
        let verifier = try Self.verifier(fake, pem: other.server.apiPrivateKeyPEM)
        #expect(
          try await Self.judge(receipt, fake, verifier: verifier)
            == .misconfigured(
              Misconfiguration(setting: .apiKey, status: 401, environment: "Production")))
        let client = try Self.client(fake, pem: other.server.apiPrivateKeyPEM)
        let info = await client.transactionInfo("2000000000000001", at: fake.base)
        #expect(info == .failure(.unauthorized))
      }
    }
  }

  @Test func aTransactionAppleDoesNotKnowIsRefused() async throws {
    try await FakeHarness.with { elsewhere in
      try await FakeHarness.with { fake in
        // A receipt signed by a trusted root whose transactions this App Store never saw.
        let foreign = try #require(try await elsewhere.purchase().string("receipt"))
        #expect(
          try await Self.judge(foreign, by: Self.verifier(fake), trusting: [elsewhere])
            == .invalid("server_api_transaction_not_found"))
        let client = try Self.client(fake)
        #expect(
          await client.transactionInfo("2999999999999999", at: fake.base) == .failure(.notFound))
        let known = try await fake.purchase()
        let id = try #require(known.string("transaction_id"))
        let signed = try await client.transactionInfo(id, at: fake.base).get()
        #expect(try decodedPayload(signed)["transactionId"] as? String == id)
        // The fake refuses what is no transaction id, as Apple does; the client never sends one.
        let raw = try await fake.get("inApps/v1/transactions/abc")
        #expect(raw.status == 401)
        #expect(
          await client.transactionInfo("../x", at: fake.base)
            == .failure(.refused(status: 400, "invalid transaction id")))
      }
    }
  }

  @Test func appleDownIsRetryableThenTheReceiptVerifies() async throws {
    try await FakeHarness.with { fake in
      let receipt = try #require(try await fake.purchase().string("receipt"))
      let verifier = try Self.verifier(fake)
      // A 429 is waited out (AppleRateLimits) for three tries; one answered 429 every time is
      // the caller's to retry.
      for (mode, count, reason) in [
        ("http503", 1, "server_api_http_503"), ("retryable", 3, "server_api_http_429"),
      ] {
        let set = try await fake.post("fake/v1/faults", ["mode": mode, "count": count])
        #expect(set.status == 200)
        #expect(try await Self.judge(receipt, fake, verifier: verifier) == .retryable(reason))
      }
      guard case .valid(let verified)? = try await Self.judge(receipt, fake, verifier: verifier)
      else {
        Issue.record("expected the receipt to verify once Apple answers")
        return
      }
      #expect(verified.transactions.count == 1)
      // Nobody listening: unreachable, retryable.
      let closed = TransactionLookupClient(
        key: try #require(
          AppStoreAPIKey(
            pem: fake.server.apiPrivateKeyPEM, keyId: "K", issuerId: "I")),
        bundleId: FakeHarness.bundleId, timeout: .seconds(2))
      let nowhere = try #require(URL(string: "http://127.0.0.1:9"))
      #expect(
        await closed.transactionInfo("1", at: nowhere)
          == .failure(.retryable("server_api_unreachable")))
    }
  }

  @Test func receiptsThatAreNoSignedAppReceiptOfThisAppAreToldApart() async throws {
    try await FakeHarness.with { fake in
      let signatures = try AppReceiptSignatureVerifier(configuration: fake.appStoreConfiguration())
      let old = try await fake.purchase(["receipt_style": "transaction"])
      #expect(signatures.check(base64: try #require(old.string("receipt"))) == .notAppReceipt)
      #expect(signatures.check(base64: "%%%") == .refused(.malformedReceipt))
      let otherApp = try await fake.purchase(["bundle_id": "com.example.other"])
      #expect(
        signatures.check(base64: try #require(otherApp.string("receipt")))
          == .refused(.bundleIdMismatch))
    }
  }
}
