import AppStore
import FakeAppStore
import FakeAppStoreTestSupport
import Foundation
import Testing

/// The App Store Server API's notification history, asked by `NotificationHistoryClient` and
/// answered by the fake: the ES256 bearer token, the onlyFailures filter and pagination.
@Suite struct NotificationHistoryTests {
  static func client(_ fake: FakeHarness, pem: String? = nil, keyId: String? = nil) throws
    -> NotificationHistoryClient
  {
    let key = try #require(
      AppStoreAPIKey(
        pem: pem ?? fake.server.apiPrivateKeyPEM,
        keyId: keyId ?? fake.server.configuration.apiKeyId,
        issuerId: fake.server.configuration.apiIssuerId))
    return NotificationHistoryClient(
      baseURL: fake.base, key: key, bundleId: FakeHarness.bundleId,
      timeout: FakeHarness.patientTimeout)
  }

  /// Sends `count` TEST notifications to `url`; their UUIDs in order.
  static func send(_ fake: FakeHarness, count: Int, to url: URL) async throws -> [String] {
    var uuids: [String] = []
    for _ in 0..<count {
      let reply = try await fake.post(
        "fake/v1/notifications",
        [
          "notification_type": "TEST", "bundle_id": FakeHarness.bundleId,
          "notify_url": url.absoluteString,
        ])
      uuids.append(try #require(reply.string("notification_uuid")))
    }
    return uuids
  }

  static func uuids(_ items: [NotificationHistoryPage.Item]) throws -> [String] {
    try items.map { try #require(decodedPayload($0.signedPayload)["notificationUUID"] as? String) }
  }

  @Test func pagesThroughTheNotificationsThatNeverArrived() async throws {
    try await NotificationReceiver.with { receiver in
      try await FakeHarness.with({
        $0.retrySchedule = []
        $0.historyPageSize = 2
      }) { fake in
        let start = Int64(Date().timeIntervalSince1970 * 1000) - 1000
        let failed = try await Self.send(fake, count: 5, to: NotificationReceiver.unreachableURL)
        let delivered = try await Self.send(fake, count: 1, to: receiver.url)
        let end = Int64(Date().timeIntervalSince1970 * 1000) + 1000
        let client = try Self.client(fake)

        var items: [NotificationHistoryPage.Item] = []
        var token: String?
        var pages = 0
        repeat {
          let page = try await client.page(
            startMs: start, endMs: end, onlyFailures: true, paginationToken: token
          ).get()
          pages += 1
          items += page.notificationHistory
          token = page.hasMore ? page.paginationToken : nil
        } while token != nil && pages < 10
        #expect(pages == 3)
        #expect(try Self.uuids(items) == failed)
        #expect(items.allSatisfy { $0.sendAttempts?.first?.sendAttemptResult == "SOCKET_ISSUE" })

        let everything = try await client.page(startMs: start, endMs: end, onlyFailures: false)
          .get()
        #expect(everything.notificationHistory.count == 2)
        #expect(everything.hasMore)
        let before = try await client.page(
          startMs: start - 60_000, endMs: start, onlyFailures: false
        )
        .get()
        #expect(before.notificationHistory.isEmpty && !before.hasMore)
        #expect(try Self.uuids(everything.notificationHistory) == Array(failed.prefix(2)))
        #expect(delivered.count == 1)
      }
    }
  }

  @Test func aTokenFromAnotherKeyOrWithAnotherKeyIdIsRefused() async throws {
    try await FakeHarness.with { other in
      try await FakeHarness.with { fake in
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        for client in [
          try Self.client(fake, pem: other.server.apiPrivateKeyPEM),
          try Self.client(fake, keyId: "SOMEONEELSE"),
        ] {
          let result = await client.page(startMs: now - 1000, endMs: now, onlyFailures: true)
          guard case .failure(.refused(let why)) = result else {
            Issue.record("expected a refusal, got \(result)")
            continue
          }
          #expect(why.contains("401"))
        }
      }
    }
  }

  /// The fake checks what Apple checks (ES256, kid, issuer, audience, bid, at most an hour),
  /// so the successful pages above prove the token's shape; here, what is not a token.
  @Test func aRequestWithoutAValidTokenIs401() async throws {
    try await FakeHarness.with { fake in
      let request = try await fake.send(
        "POST", "inApps/v1/notifications/history", body: Data("{}".utf8),
        headers: ["Authorization": "Bearer not.a.jwt"])
      #expect(request.status == 401)
      let unauthenticated = try await fake.send(
        "POST", "inApps/v1/notifications/history", body: Data("{}".utf8), headers: [:])
      #expect(unauthenticated.status == 401)
    }
  }

  @Test func onlyAP256PrivateKeyLoads() async throws {
    try await FakeHarness.with { fake in
      #expect(AppStoreAPIKey(pem: "not a key", keyId: "K", issuerId: "I") == nil)
      #expect(AppStoreAPIKey(pem: fake.server.rootCertificatePEM, keyId: "K", issuerId: "I") == nil)
      #expect(AppStoreAPIKey(pem: fake.server.apiPrivateKeyPEM, keyId: "K", issuerId: "I") != nil)
    }
  }
}
