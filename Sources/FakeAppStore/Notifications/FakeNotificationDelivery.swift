import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

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

  private let session: URLSession
  private let timeout: TimeInterval

  init(timeout: TimeInterval = 10) {
    let configuration = URLSessionConfiguration.ephemeral
    configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
    configuration.timeoutIntervalForRequest = timeout
    session = URLSession(configuration: configuration)
    self.timeout = timeout
  }

  deinit { session.finishTasksAndInvalidate() }

  func deliver(_ signedPayload: String, to url: URL) async -> Outcome {
    var request = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData)
    // Through the property: FoundationNetworking ignores the initializer's timeout.
    request.timeoutInterval = timeout
    request.httpMethod = "POST"
    request.setValue("application/json", forHTTPHeaderField: "Content-Type")
    do {
      request.httpBody = try JSONEncoder().encode(["signedPayload": signedPayload])
    } catch {
      return Outcome(status: nil, error: "could not encode the body", result: .other)
    }
    return await withCheckedContinuation { continuation in
      let task = session.dataTask(with: request) { _, response, error in
        if let error {
          continuation.resume(
            returning: Outcome(
              status: nil, error: error.localizedDescription,
              result: FakeSendAttemptResult(error)))
        } else if let response = response as? HTTPURLResponse {
          continuation.resume(
            returning: Outcome(
              status: response.statusCode, error: nil,
              result: FakeSendAttemptResult(status: response.statusCode)))
        } else {
          continuation.resume(
            returning: Outcome(status: nil, error: "no HTTP response", result: .invalidResponse))
        }
      }
      task.resume()
    }
  }
}
