import AppStore
import FakeAppStore
import FakeAppStoreTestSupport
import Foundation
import Testing

/// Apple's 429: its `Retry-After` read as Apple documents it (a UNIX time in milliseconds),
/// obeyed by every App Store Server API client through one shared record per endpoint, and the
/// Set App Account Token client against the fake, which answers 429 on request and counts any
/// request that comes back before the instant it gave.
@Suite struct AppleRateLimitTests {
  static func client(_ fake: FakeHarness) throws -> AppAccountTokenClient {
    let key = try #require(
      AppStoreAPIKey(
        pem: fake.server.apiPrivateKeyPEM, keyId: fake.server.configuration.apiKeyId,
        issuerId: fake.server.configuration.apiIssuerId))
    return AppAccountTokenClient(
      key: key, bundleId: FakeHarness.bundleId, timeout: FakeHarness.patientTimeout)
  }

  static func failure(_ result: Result<Void, AppAccountTokenClient.Failure>)
    -> AppAccountTokenClient.Failure?
  {
    if case .failure(let failure) = result { return failure }
    return nil
  }

  static func calls(_ fake: FakeHarness) async throws -> [String: Int] {
    try await fake.get("fake/v1/calls").json.compactMapValues { $0 as? Int }
  }

  @Test func retryAfterIsApplesUnixTimeInMillisecondsOrTheStandardSeconds() {
    let now = Date(timeIntervalSince1970: 1_780_000_000)
    #expect(
      AppleRetryAfter.instant("1780000004500", now: now)
        == Date(timeIntervalSince1970: 1_780_000_004.5))
    #expect(AppleRetryAfter.instant(" 3 ", now: now) == now.addingTimeInterval(3))
    for unusable in [nil, "", "soon", "-5", "1.5", "Wed, 21 Oct 2026 07:28:00 GMT", "9" * 30] {
      #expect(AppleRetryAfter.instant(unusable, now: now) == nil)
    }
  }

  @Test func anEndpointIsBlockedUntilApplesInstantBoundedAndPerEndpoint() throws {
    let limits = AppleRateLimits(maximumWait: .seconds(1), longestBlock: 600, defaultBlock: 2)
    let base = try #require(URL(string: "https://api.storekit.apple.com"))
    let one = AppleRateLimits.endpoint(
      method: "PUT", baseURL: base, path: "inApps/v1/transactions/2000000000000001/appAccountToken")
    let other = AppleRateLimits.endpoint(
      method: "PUT", baseURL: base, path: "inApps/v1/transactions/2000000000000002/appAccountToken")
    let lookup = AppleRateLimits.endpoint(
      method: "GET", baseURL: base, path: "inApps/v1/transactions/2000000000000001")
    // The ids are left out: Apple limits the endpoint, not one purchase.
    #expect(one == other && one != lookup)
    let now = Date(timeIntervalSince1970: 1_780_000_000)
    #expect(limits.blockedUntil(one, now: now) == nil)
    let instant = limits.block(one, retryAfter: "1780000030000", now: now)
    #expect(instant == now.addingTimeInterval(30))
    #expect(limits.blockedUntil(other, now: now.addingTimeInterval(29.9)) == instant)
    #expect(limits.blockedUntil(lookup, now: now) == nil)
    #expect(limits.blockedUntil(one, now: instant) == nil)
    // No usable header: the default rest. A far future: at most `longestBlock`.
    #expect(limits.block(lookup, retryAfter: nil, now: now) == now.addingTimeInterval(2))
    #expect(
      limits.block(one, retryAfter: "99999999999999", now: now) == now.addingTimeInterval(600))
  }

  @Test func setAppAccountTokenWaitsOutANear429AndAsksNoSooner() async throws {
    try await FakeHarness.with { fake in
      let purchase = try await fake.purchase()
      let id = try #require(purchase.string("transaction_id"))
      _ = try await fake.post("fake/v1/rate-limit", ["count": 2, "retry_after_ms": 400])
      let token = UUID().uuidString
      let result = try await Self.client(fake).setToken(
        token, originalTransactionId: id, at: fake.base)
      #expect(Self.failure(result) == nil)
      let calls = try await Self.calls(fake)
      #expect(calls["set_app_account_token"] == 3)
      #expect(calls["rate_limited"] == 2)
      #expect(calls["rate_limited_early"] == 0)
      let now = try await fake.get("fake/v1/transactions/\(id)")
      #expect(now.string("app_account_token") == token.lowercased())
    }
  }

  @Test func aFar429IsTheCallersWithApplesInstantAndNothingIsSentBeforeIt() async throws {
    try await FakeHarness.with { fake in
      let purchase = try await fake.purchase()
      let id = try #require(purchase.string("transaction_id"))
      _ = try await fake.post("fake/v1/rate-limit", ["count": 1, "retry_after_ms": 60_000])
      let client = try Self.client(fake)
      let before = Date()
      let first = await client.setToken(UUID().uuidString, originalTransactionId: id, at: fake.base)
      guard case .failure(.rateLimited(let retryAt)) = first else {
        Issue.record("expected rateLimited, got \(first)")
        return
      }
      #expect(retryAt > before.addingTimeInterval(50))
      // Another purchase, same endpoint: not sent at all before Apple's instant.
      let second = await client.setToken(
        UUID().uuidString, originalTransactionId: id, at: fake.base)
      #expect(Self.failure(second) == .rateLimited(retryAt: retryAt))
      let calls = try await Self.calls(fake)
      #expect(calls["set_app_account_token"] == 1)
      #expect(calls["rate_limited_early"] == 0)
    }
  }

  @Test func applesRefusalsOfSetAppAccountTokenAreTold() async throws {
    try await FakeHarness.with { fake in
      let client = try Self.client(fake)
      let unknown = await client.setToken(
        UUID().uuidString, originalTransactionId: "2999999999999999", at: fake.base)
      guard case .failure(.refused(status: 404, _)) = unknown else {
        Issue.record("expected 404, got \(unknown)")
        return
      }
      // Never sent: not a UUID, not a transaction id.
      let purchase = try await fake.purchase()
      let id = try #require(purchase.string("transaction_id"))
      #expect(
        Self.failure(await client.setToken("nope", originalTransactionId: id, at: fake.base))
          == .refused(status: 400, "not a UUID"))
      #expect(
        Self.failure(
          await client.setToken(UUID().uuidString, originalTransactionId: "1/../2", at: fake.base))
          == .refused(status: 400, "not a transaction id"))
      #expect(try await Self.calls(fake)["set_app_account_token"] == 1)
    }
  }
}

extension String {
  fileprivate static func * (text: String, count: Int) -> String {
    String(repeating: text, count: count)
  }
}
