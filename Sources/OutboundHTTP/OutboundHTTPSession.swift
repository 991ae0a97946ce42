import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The server's own requests to others (Apple, an identity provider's key set) through one
/// ephemeral URLSession: no cache, no cookies, and what URLSession on Linux does not reliably
/// do itself — keep the request's deadline, and stop the request when the task awaiting it is
/// cancelled.
public final class OutboundHTTPSession: Sendable {
  private let session: URLSession

  public init() {
    let configuration = URLSessionConfiguration.ephemeral
    configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
    configuration.httpShouldSetCookies = false
    session = URLSession(configuration: configuration)
  }

  deinit { session.finishTasksAndInvalidate() }

  /// The status and body of the answer to `request`, whatever the status. Throws an
  /// `OutboundHTTPError` when no HTTP answer came within `timeout`.
  public func send(_ request: URLRequest, timeout: Duration) async throws -> (
    status: Int, body: [UInt8]
  ) {
    let answer = try await exchange(request, timeout: timeout)
    return (answer.status, answer.body)
  }

  /// The whole answer to `request`, its header fields included (a `Retry-After` to keep).
  /// Throws an `OutboundHTTPError` when no HTTP answer came within `timeout`.
  public func exchange(_ request: URLRequest, timeout: Duration) async throws -> OutboundHTTPAnswer
  {
    // Whichever finishes first wins, the other is cancelled.
    try await withThrowingTaskGroup(of: OutboundHTTPAnswer.self) { group in
      group.addTask { try await self.perform(request) }
      group.addTask {
        try await Task.sleep(for: timeout)
        throw OutboundHTTPError.deadlinePassed
      }
      defer { group.cancelAll() }
      guard let first = try await group.next() else { throw OutboundHTTPError.deadlinePassed }
      return first
    }
  }

  private func perform(_ request: URLRequest) async throws -> OutboundHTTPAnswer {
    let running = RunningDataTask()
    return try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation { continuation in
        let task = session.dataTask(with: request) { data, response, error in
          if let error {
            continuation.resume(throwing: OutboundHTTPError.failed(error))
          } else if let response = response as? HTTPURLResponse {
            continuation.resume(
              returning: OutboundHTTPAnswer(
                status: response.statusCode, headers: Self.headers(of: response),
                body: data.map { [UInt8]($0) } ?? []))
          } else {
            continuation.resume(throwing: OutboundHTTPError.notHTTP)
          }
        }
        running.start(task)
      }
    } onCancel: {
      running.cancel()
    }
  }

  /// Field names lowercased, so lookups need not guess the peer's spelling.
  private static func headers(of response: HTTPURLResponse) -> [String: String] {
    var headers: [String: String] = [:]
    for (name, value) in response.allHeaderFields {
      guard let name = name as? String, let value = value as? String else { continue }
      headers[name.lowercased()] = value
    }
    return headers
  }
}
