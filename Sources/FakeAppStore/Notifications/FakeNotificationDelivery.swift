import Foundation
import OutboundHTTP

/// POSTs `{"signedPayload": ...}` to the app's notification URL, as Apple does.
final class FakeNotificationDelivery: Sendable {
  struct Outcome: Sendable {
    /// The receiver's HTTP status; nil when no answer came.
    var status: Int?
    var error: String?
    /// Apple's `sendAttemptResult` for this attempt.
    var result: FakeSendAttemptResult

    /// Apple counts 200 through 206 as received; anything else is retried.
    var succeeded: Bool { result == .success }
  }

  private let session = OutboundHTTPSession(maxBody: 64 << 10)
  private let timeout: Duration

  init(timeout: Duration = .seconds(10)) {
    self.timeout = timeout
  }

  func deliver(_ signedPayload: String, to url: URL) async -> Outcome {
    let body: [UInt8]
    do {
      body = [UInt8](try JSONEncoder().encode(["signedPayload": signedPayload]))
    } catch {
      return Outcome(status: nil, error: "could not encode the body", result: .other)
    }
    do {
      let answer = try await session.post(
        url: url, body: body, headers: [("Content-Type", "application/json")], timeout: timeout)
      return Outcome(
        status: answer.status, error: nil, result: FakeSendAttemptResult(status: answer.status))
    } catch {
      return Outcome(status: nil, error: "\(error)", result: FakeSendAttemptResult(error))
    }
  }
}
