import AppStore
import FakeAppStore
import FakeAppStoreTestSupport
import Foundation
import Testing

/// Send Consumption Information v2, sent by `ConsumptionInformationClient` and checked by the
/// fake as Apple documents it: what Apple accepts is 202, and each failure is told apart as
/// the worker needs (retry, fix the key, give up).
@Suite struct ConsumptionInformationTests {
  static func client(_ fake: FakeHarness, keyId: String? = nil) throws
    -> ConsumptionInformationClient
  {
    let key = try #require(
      AppStoreAPIKey(
        pem: fake.server.apiPrivateKeyPEM, keyId: keyId ?? fake.server.configuration.apiKeyId,
        issuerId: fake.server.configuration.apiIssuerId))
    return ConsumptionInformationClient(
      productionURL: fake.base, sandboxURL: fake.base.appendingPathComponent("sandbox"),
      key: key, bundleId: FakeHarness.bundleId)
  }

  static let delivered = ConsumptionInformation(
    customerConsented: true, deliveryStatus: .delivered, consumptionPercentage: 42_000,
    refundPreference: .grantProrated, sampleContentProvided: false)

  static func buy(_ fake: FakeHarness, environment: String = "Production") async throws -> String {
    let reply = try await fake.purchase([
      "product_id": "gold.100", "type": "Consumable", "environment": environment,
    ])
    return try #require(reply.string("transaction_id"))
  }

  @Test func apple202sWhatItDocumentsAndTheFakeKeepsTheBodyAsSent() async throws {
    try await FakeHarness.with { fake in
      let id = try await Self.buy(fake)
      let client = try Self.client(fake)
      let result = await client.send(
        Self.delivered, transactionId: id, environment: "Production")
      #expect(try result.get() == 202)
      let log = try await fake.get("fake/v1/consumption/\(id)")
      let calls = try #require(log.json["calls"] as? [[String: Any]])
      #expect(calls.count == 1)
      let body = try #require(calls.first?["body"] as? [String: Any])
      #expect(body["consumptionPercentage"] as? Int == 42_000)
      #expect(body["refundPreference"] as? String == "GRANT_PRORATED")
      #expect(body["customerConsented"] as? Bool == true)
    }
  }

  @Test func theSandboxIsAskedAtItsOwnHost() async throws {
    try await FakeHarness.with { fake in
      let id = try await Self.buy(fake, environment: "Sandbox")
      let client = try Self.client(fake)
      #expect(
        await client.send(Self.delivered, transactionId: id, environment: "Sandbox")
          == .success(202))
      guard
        case .failure(.refused(status: 404, _)) = await client.send(
          Self.delivered, transactionId: id, environment: "Production")
      else {
        Issue.record("production knows a sandbox transaction")
        return
      }
    }
  }

  @Test func eachFailureIsToldApart() async throws {
    try await FakeHarness.with { fake in
      let id = try await Self.buy(fake)
      let client = try Self.client(fake)
      var refused = Self.delivered
      refused.customerConsented = false
      guard
        case .failure(.refused(status: 400, let detail)) = await client.send(
          refused, transactionId: id, environment: "Production")
      else {
        Issue.record("an answer without consent was not refused")
        return
      }
      #expect(detail.contains("InvalidCustomerConsentedError"))
      for status in [503, 500] {
        _ = try await fake.post("fake/v1/consumption/faults", ["fail_next": 1, "status": status])
        let answer = await client.send(
          Self.delivered, transactionId: id, environment: "Production")
        guard case .failure(.retryable) = answer else {
          // What the fake recorded tells a lost fault from a misread answer.
          let log = try await fake.get("fake/v1/consumption/\(id)")
          Issue.record("\(status) is not retryable: \(answer); the fake saw \(log.json)")
          return
        }
      }
      // Apple's 429 goes through the Server API's one mechanism: a near instant is waited
      // out and the call sent again; past its tries the caller hears when it may come back.
      _ = try await fake.post("fake/v1/consumption/faults", ["fail_next": 1, "status": 429])
      #expect(
        await client.send(Self.delivered, transactionId: id, environment: "Production")
          == .success(202))
      _ = try await fake.post("fake/v1/consumption/faults", ["fail_next": 3, "status": 429])
      guard
        case .failure(.rateLimited) = await client.send(
          Self.delivered, transactionId: id, environment: "Production")
      else {
        Issue.record("three 429s in a row did not say when to come back")
        return
      }
      let wrongKey = try Self.client(fake, keyId: "WRONGKEY01")
      #expect(
        await wrongKey.send(Self.delivered, transactionId: id, environment: "Production")
          == .failure(.unauthorized))
      guard
        case .failure(.refused(status: 0, _)) = await client.send(
          Self.delivered, transactionId: "../../etc", environment: "Production")
      else {
        Issue.record("a path that is no transaction id was sent")
        return
      }
    }
  }
}
