import FakeAppStoreTestSupport
import Foundation
import Testing

/// The fake re-sends notifications the receiver did not accept, as Apple documents in
/// "Responding to App Store Server Notifications": production only, statuses 200–206 count as
/// received, retries follow a schedule (Apple's is hours long; these tests shorten it).
@Suite struct FakeNotificationRedeliveryTests {
  static let shortSchedule: [Duration] = Array(repeating: .milliseconds(50), count: 5)

  /// Polls the fake's history of `uuid` until no retry is left to come (for up to a minute: a
  /// loaded machine can be slow to run the retries).
  static func settledHistory(_ fake: FakeHarness, _ uuid: String) async throws
    -> FakeHarness.Reply
  {
    let deadline = ContinuousClock.now + .seconds(60)
    while ContinuousClock.now < deadline {
      let history = try await fake.get("fake/v1/notifications/\(uuid)")
      try #require(history.status == 200, "\(history.json)")
      if history["retries_left"] as? Int == 0 { return history }
      try await Task.sleep(for: .milliseconds(50))
    }
    throw FakeHarness.HarnessError(description: "retries of \(uuid) never ended")
  }

  /// A fake that notifies `receiver` and retries on the short schedule.
  static func withFake<T: Sendable>(
    notifying receiver: NotificationReceiver, schedule: [Duration] = shortSchedule,
    _ body: (FakeHarness) async throws -> T
  ) async throws -> T {
    try await withFake(notifying: receiver.url, schedule: schedule, body)
  }

  static func withFake<T: Sendable>(
    notifying url: URL, schedule: [Duration] = shortSchedule,
    _ body: (FakeHarness) async throws -> T
  ) async throws -> T {
    try await FakeHarness.with(
      {
        $0.notifyURL = url
        $0.retrySchedule = schedule
      }, body)
  }

  /// Buys a consumable and refunds it; the fake's answer to the refund.
  static func refundAPurchase(_ fake: FakeHarness, _ fields: [String: Any] = [:]) async throws
    -> FakeHarness.Reply
  {
    let id = try #require(try await fake.purchase(fields).string("transaction_id"))
    return try await fake.post("fake/v1/refunds", ["transaction_id": id])
  }

  static func results(_ history: FakeHarness.Reply) -> [String] {
    (history["send_attempts"] as? [[String: Any]] ?? []).compactMap {
      $0["send_attempt_result"] as? String
    }
  }

  @Test func aProductionNotificationIsResentUntilTheReceiverAcceptsIt() async throws {
    try await NotificationReceiver.with(statuses: [500, 404, 206]) { receiver in
      try await Self.withFake(notifying: receiver) { fake in
        let reply = try await Self.refundAPurchase(fake)
        #expect(reply["delivered_status"] as? Int == 500)
        #expect(reply["retries_left"] as? Int == 5)
        let uuid = try #require(reply.string("notification_uuid"))

        let history = try await Self.settledHistory(fake, uuid)
        #expect(
          Self.results(history) == [
            "UNSUCCESSFUL_HTTP_RESPONSE_CODE", "UNSUCCESSFUL_HTTP_RESPONSE_CODE", "SUCCESS",
          ])
        #expect(history.string("notification_type") == "REFUND")
        let signed = try #require(reply.string("signed_payload"))
        #expect(receiver.signedPayloads == [signed, signed, signed])
        // Accepted: nothing more arrives.
        try await Task.sleep(for: .milliseconds(300))
        #expect(receiver.signedPayloads.count == 3)
      }
    }
  }

  @Test func anUnreachableReceiverGetsEveryRetryThenNoMore() async throws {
    try await Self.withFake(notifying: NotificationReceiver.unreachableURL) { fake in
      let reply = try await Self.refundAPurchase(fake)
      #expect(reply["delivered_status"] is NSNull)
      let history = try await Self.settledHistory(
        fake, try #require(reply.string("notification_uuid")))
      #expect(Self.results(history) == Array(repeating: "SOCKET_ISSUE", count: 6))
      let dates = (history["send_attempts"] as? [[String: Any]] ?? []).compactMap {
        $0["attempt_date"] as? Int
      }
      #expect(dates == dates.sorted())
    }
  }

  @Test func aSandboxNotificationIsSentOnce() async throws {
    try await NotificationReceiver.with(statuses: [503]) { receiver in
      try await Self.withFake(notifying: receiver) { fake in
        let reply = try await Self.refundAPurchase(fake, ["environment": "Sandbox"])
        #expect(reply["delivered_status"] as? Int == 503)
        #expect(reply["retries_left"] as? Int == 0)
        let history = try await Self.settledHistory(
          fake, try #require(reply.string("notification_uuid")))
        #expect(Self.results(history) == ["UNSUCCESSFUL_HTTP_RESPONSE_CODE"])
        try await Task.sleep(for: .milliseconds(300))
        #expect(receiver.signedPayloads.count == 1)
      }
    }
  }

  @Test func anAcceptedNotificationIsNotResentAndAnUnknownOneIsNotFound() async throws {
    try await NotificationReceiver.with { receiver in
      try await Self.withFake(notifying: receiver) { fake in
        let reply = try await fake.post(
          "fake/v1/notifications", ["notification_type": "TEST", "bundle_id": FakeHarness.bundleId])
        #expect(reply["delivered_status"] as? Int == 200)
        #expect(reply["retries_left"] as? Int == 0)
        let history = try await Self.settledHistory(
          fake, try #require(reply.string("notification_uuid")))
        #expect(Self.results(history) == ["SUCCESS"])
        #expect((history["send_attempts"] as? [[String: Any]])?.first?["status"] as? Int == 200)

        let unknown = try await fake.get("fake/v1/notifications/no-such-uuid")
        #expect(unknown.status == 404)
        #expect(unknown.string("code") == "notification_not_found")
      }
    }
  }

  @Test func shutdownDropsRetriesStillToCome() async throws {
    // The retry is due 3 s after the first delivery: time enough for a loaded machine to shut
    // the fake down before it, and the wait after shutdown runs 2 s past it.
    try await NotificationReceiver.with(statuses: [500]) { receiver in
      try await Self.withFake(notifying: receiver, schedule: [.seconds(3)]) { fake in
        let reply = try await Self.refundAPurchase(fake)
        #expect(reply["retries_left"] as? Int == 1)
        await fake.server.shutdown()
      }
      try await Task.sleep(for: .seconds(5))
      #expect(receiver.signedPayloads.count == 1)
    }
  }
}
