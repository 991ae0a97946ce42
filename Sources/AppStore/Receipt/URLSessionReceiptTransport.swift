import Foundation
import Synchronization

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The production transport: HTTPS through URLSession, one ephemeral session, no caching.
public final class URLSessionReceiptTransport: ReceiptTransport {
  private let session: URLSession

  public init() {
    let configuration = URLSessionConfiguration.ephemeral
    configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
    configuration.httpShouldSetCookies = false
    session = URLSession(configuration: configuration)
  }

  deinit { session.finishTasksAndInvalidate() }

  public func post(url: URL, body: [UInt8], headers: [String: String], timeout: Duration)
    async throws -> (status: Int, body: [UInt8])
  {
    let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
    var request = URLRequest(
      url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: seconds)
    request.httpMethod = "POST"
    request.httpBody = Data(body)
    request.setValue("application/json", forHTTPHeaderField: "Content-Type")
    request.setValue("application/json", forHTTPHeaderField: "Accept")
    for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
    return try await run(request, timeout: timeout)
  }

  public func get(url: URL, headers: [String: String], timeout: Duration) async throws -> (
    status: Int, body: [UInt8]
  ) {
    let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
    var request = URLRequest(
      url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: seconds)
    request.httpMethod = "GET"
    request.setValue("application/json", forHTTPHeaderField: "Accept")
    for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
    return try await run(request, timeout: timeout)
  }

  private func run(_ request: URLRequest, timeout: Duration) async throws -> (
    status: Int, body: [UInt8]
  ) {
    // URLSession on Linux does not reliably end a request at `timeoutInterval`, so the
    // deadline is enforced here too: whichever finishes first wins, the other is cancelled.
    let prepared = request
    return try await withThrowingTaskGroup(of: (status: Int, body: [UInt8]).self) { group in
      group.addTask { try await self.perform(prepared) }
      group.addTask {
        try await Task.sleep(for: timeout)
        throw ReceiptTransportError.timedOut
      }
      defer { group.cancelAll() }
      guard let first = try await group.next() else { throw ReceiptTransportError.timedOut }
      return first
    }
  }

  private func perform(_ request: URLRequest) async throws -> (status: Int, body: [UInt8]) {
    let running = RunningTask()
    return try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation { continuation in
        let task = session.dataTask(with: request) { data, response, error in
          if let error {
            continuation.resume(throwing: Self.transportError(error))
          } else if let response = response as? HTTPURLResponse {
            continuation.resume(returning: (response.statusCode, data.map { [UInt8]($0) } ?? []))
          } else {
            continuation.resume(
              throwing: ReceiptTransportError.connectionFailed("no HTTP response"))
          }
        }
        running.start(task)
      }
    } onCancel: {
      running.cancel()
    }
  }

  private static func transportError(_ error: any Error) -> ReceiptTransportError {
    if let urlError = error as? URLError, urlError.code == .timedOut { return .timedOut }
    return .connectionFailed(String(describing: error))
  }
}

/// The data task of one request, so a cancellation arriving at any moment reaches it.
private final class RunningTask: Sendable {
  private let state = Mutex<(task: URLSessionDataTask?, cancelled: Bool)>((nil, false))

  func start(_ task: URLSessionDataTask) {
    let cancelled = state.withLock { state in
      state.task = task
      return state.cancelled
    }
    task.resume()
    if cancelled { task.cancel() }
  }

  func cancel() {
    state.withLock { state in
      state.cancelled = true
      return state.task
    }?.cancel()
  }
}
