import Foundation
import Synchronization

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// GETs the JWKS document through URLSession (its own threads, never an event loop's), with a
/// deadline enforced here too because URLSession on Linux does not reliably keep one.
public final class URLSessionJWKSFetcher: JWKSFetching {
  private let url: URL
  private let timeout: Duration
  private let session: URLSession
  /// A key set is a few kilobytes; anything far larger is not one.
  static let maxBytes = 256 * 1024

  public init(url: URL, timeout: Duration = .seconds(5)) {
    self.url = url
    self.timeout = timeout
    let configuration = URLSessionConfiguration.ephemeral
    configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
    configuration.httpShouldSetCookies = false
    session = URLSession(configuration: configuration)
  }

  deinit { session.finishTasksAndInvalidate() }

  public func fetch() async throws -> [UInt8] {
    let seconds = Double(timeout.components.seconds)
    var request = URLRequest(
      url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: max(1, seconds))
    request.setValue("application/json", forHTTPHeaderField: "Accept")
    let prepared = request
    let timeout = self.timeout
    return try await withThrowingTaskGroup(of: [UInt8].self) { group in
      group.addTask { try await self.perform(prepared) }
      group.addTask {
        try await Task.sleep(for: timeout)
        throw JWKSFetchError("timed out")
      }
      defer { group.cancelAll() }
      guard let first = try await group.next() else { throw JWKSFetchError("timed out") }
      return first
    }
  }

  private func perform(_ request: URLRequest) async throws -> [UInt8] {
    let task = TaskBox()
    return try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation { continuation in
        let dataTask = session.dataTask(with: request) { data, response, error in
          if let error {
            continuation.resume(throwing: JWKSFetchError(String(describing: error)))
          } else if let response = response as? HTTPURLResponse, response.statusCode == 200 {
            let bytes = data.map { [UInt8]($0) } ?? []
            if bytes.count > Self.maxBytes {
              continuation.resume(throwing: JWKSFetchError("document too large"))
            } else {
              continuation.resume(returning: bytes)
            }
          } else {
            let status = (response as? HTTPURLResponse)?.statusCode ?? 0
            continuation.resume(throwing: JWKSFetchError("HTTP status \(status)"))
          }
        }
        task.start(dataTask)
      }
    } onCancel: {
      task.cancel()
    }
  }
}

/// The data task of one fetch, so a cancellation arriving at any moment reaches it.
private final class TaskBox: Sendable {
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
