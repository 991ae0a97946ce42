import Postgres
import StorekeeperTestSupport
import Testing

@testable import StorekeeperCore

/// A worker whose lease on a consumption answer ran out (Apple was slow; another instance took
/// the job up again) records nothing when it finally returns: the job is the later attempt's,
/// so a `sent` answer is not turned `failed`, nor its event written twice.
@Suite(.database) struct ConsumptionAnswerLeaseTests {
  @Test func onlyTheAttemptHoldingTheJobRecordsIt() async throws {
    try await DomainHarness.with { h in
      let answers = ConsumptionAnswers(database: h.database, outbox: h.orders.outbox)
      let now = h.clock.clock.milliseconds
      try await h.database.withTransaction { tx in
        try await tx.execute(
          """
          INSERT INTO apple_notifications (notification_uuid, notification_type, payload, state)
          VALUES ('n-1', 'CONSUMPTION_REQUEST', '{}', 'processed')
          """)
        try await ConsumptionAnswers.enqueue(
          notificationUuid: "n-1", transactionId: "t-1", environment: "Production",
          signedDateMs: now, nowMs: now, on: tx)
      }
      let slow = try #require(try await answers.claim().first)
      try await h.database.execute(
        "UPDATE consumption_answers SET next_attempt_at = now() - interval '1 second'")
      let again = try #require(try await answers.claim().first)
      #expect(again.attempts == slow.attempts + 1)

      try await answers.record(
        again, state: .sent, information: nil, userId: "alice", outcome: "accepted", error: nil)
      try await answers.record(
        slow, state: .failed, information: nil, userId: "alice", outcome: "refused",
        error: "late", retryAfterSeconds: nil)
      try await answers.record(
        slow, state: .failed, information: nil, userId: "alice", outcome: nil, error: "late",
        retryAfterSeconds: 60)

      let row = try #require(
        try await h.database.query(
          "SELECT state, outcome, last_error FROM consumption_answers WHERE notification_uuid = 'n-1'"
        ).first)
      #expect(try row.decode("state", as: String.self) == "sent")
      #expect(try row.decode("outcome", as: String.self) == "accepted")
      #expect(try row.decodeIfPresent("last_error", as: String.self) == nil)
      let answered = try await h.writtenEvents("alice").filter { $0.type == "consumption.answered" }
      #expect(answered.count == 1)
    }
  }
}
