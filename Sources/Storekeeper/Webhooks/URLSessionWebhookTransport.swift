import Foundation
import Synchronization

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Webhooks over URLSession, as the App Store clients call Apple: one ephemeral session, no
/// cookies or cache, and the deadline enforced here as well as by URLSession (which on Linux
/// does not reliably end a request at `timeoutInterval`). Redirects are not followed: a 3xx is
/// an answer that is not 2xx, so a receiver cannot bounce signed events to another address.
final class URLSessionWebhookTransport: WebhookTransport {
  private let session: URLSession

  init() {
    let configuration = URLSessionConfiguration.ephemeral
    configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
    configuration.httpShouldSetCookies = false
    configuration.httpCookieAcceptPolicy = .never
    configuration.urlCache = nil
    session = URLSession(
      configuration: configuration, delegate: RefuseRedirects(), delegateQueue: nil)
  }

  deinit { session.finishTasksAndInvalidate() }

  func post(url: URL, body: [UInt8], headers: [(String, String)], timeout: Duration) async
    -> WebhookTransportAnswer
  {
    let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
    var request = URLRequest(
      url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: seconds)
    request.httpMethod = "POST"
    request.httpBody = Data(body)
    for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
    let prepared = request
    return await withTaskGroup(of: WebhookTransportAnswer.self) { group in
      group.addTask { await self.perform(prepared) }
      group.addTask {
        try? await Task.sleep(for: timeout)
        return .timedOut
      }
      defer { group.cancelAll() }
      return await group.next() ?? .timedOut
    }
  }

  private func perform(_ request: URLRequest) async -> WebhookTransportAnswer {
    let running = RunningDataTask()
    return await withTaskCancellationHandler {
      await withCheckedContinuation { continuation in
        let task = session.dataTask(with: request) { data, response, error in
          if let response = response as? HTTPURLResponse {
            continuation.resume(
              returning: .answered(
                status: response.statusCode, body: data.map { [UInt8]($0) } ?? []))
          } else if let urlError = error as? URLError, urlError.code == .timedOut {
            continuation.resume(returning: .timedOut)
          } else {
            continuation.resume(
              returning: .connectionFailed(
                error.map { String(describing: $0) } ?? "no HTTP response"))
          }
        }
        running.start(task)
      }
    } onCancel: {
      running.cancel()
    }
  }
}

/// Answers every redirect with "do not follow", so the 3xx itself is the answer.
private final class RefuseRedirects: NSObject, URLSessionTaskDelegate, Sendable {
  func urlSession(
    _ session: URLSession, task: URLSessionTask,
    willPerformHTTPRedirection response: HTTPURLResponse,
    newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
  ) {
    completionHandler(nil)
  }
}

/// The data task of one request, so a cancellation arriving at any moment reaches it.
private final class RunningDataTask: Sendable {
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
