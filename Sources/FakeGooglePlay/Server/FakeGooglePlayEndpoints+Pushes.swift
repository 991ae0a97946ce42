import Foundation
import HTTP

extension FakeGooglePlayEndpoints {
  /// What the outbox holds, and the controls that lose a push (withhold) or bring it late
  /// (release).
  func registerPushControls(_ router: inout Router) {
    router.add(.get, "/fake/v1/pushes") { [self] _, _ in pushes() }
    router.add(.post, "/fake/v1/pushes/withhold") { [self] request, _ in try withhold(request) }
    router.add(.post, "/fake/v1/pushes/{messageId}/release") { [self] _, context in
      try release(context.parameters["messageId"] ?? "")
    }
  }

  func pushes() -> Response {
    FakeGoogleError.json([
      "pushes": outbox.records.map { record -> [String: Any] in
        [
          "message_id": record.messageId, "delivered": record.delivered,
          "gave_up": record.gaveUp, "withheld": record.withheld,
          "attempts": record.attempts.map { $0 ?? 0 },
          "data": (try? JSONSerialization.jsonObject(with: Data(record.data))) ?? [:],
        ]
      }
    ])
  }

  /// `POST /fake/v1/pushes/withhold` `{count?}` (1 unless named): the next `count` messages
  /// published, whatever they say, are recorded (`withheld` in `GET /fake/v1/pushes`) but never
  /// pushed, as a push Storekeeper never got. Google's APIs answer as ever: the voided
  /// purchases list still lists a void whose push was withheld.
  func withhold(_ request: Request) throws -> Response {
    let body = try FakeControlBody(request)
    let count = try body.int("count") ?? 1
    guard (1...1000).contains(count) else {
      throw FakeControlBody.invalid("count", "must be 1 to 1000")
    }
    return FakeGoogleError.json(["withholding": outbox.withhold(Int(count))])
  }

  /// `POST /fake/v1/pushes/{message_id}/release`: a withheld message is pushed now, late, and
  /// retried as any other (its retention counted from the release).
  func release(_ messageId: String) throws -> Response {
    switch outbox.release(messageId) {
    case .released: return FakeGoogleError.json(["message_id": messageId, "released": true])
    case .unknown:
      throw HTTPError(
        404, code: "message_not_found", detail: "No message \(messageId.prefix(40)) was published.")
    case .notWithheld:
      throw HTTPError(409, code: "not_withheld", detail: "The message was not withheld.")
    }
  }
}
