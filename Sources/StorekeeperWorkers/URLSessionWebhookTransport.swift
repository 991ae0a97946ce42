import Foundation
import Synchronization

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Webhooks over URLSession, as the App Store clients call Apple: one ephemeral session, no
/// cookies or cache, and the deadline enforced here as well as by URLSession (which on Linux
/// does not reliably end a request at `timeoutInterval`). Redirects are not followed: a 3xx is
/// an answer that is not 2xx, so a receiver cannot bounce signed events to another address.
/// An answer's body is read up to `maxBody` bytes and the request then ended, so a receiver
/// cannot make an instance hold more than that per attempt.
package final class URLSessionWebhookTransport: WebhookTransport {
  private let session: URLSession
  private let collector: AnswerCollector

  package init(maxBody: Int = 4096) {
    let configuration = URLSessionConfiguration.ephemeral
    configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
    configuration.httpShouldSetCookies = false
    configuration.httpCookieAcceptPolicy = .never
    configuration.urlCache = nil
    collector = AnswerCollector(maxBody: maxBody)
    session = URLSession(configuration: configuration, delegate: collector, delegateQueue: nil)
  }

  deinit { session.finishTasksAndInvalidate() }

  package func post(url: URL, body: [UInt8], headers: [(String, String)], timeout: Duration) async
    -> WebhookTransportAnswer
  {
    let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
    var request = URLRequest(
      url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: seconds)
    request.httpMethod = "POST"
    request.httpBody = Data(body)
    for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
    let task = session.dataTask(with: request)
    let id = task.taskIdentifier
    let collector = self.collector
    // The deadline resumes the caller itself: URLSession on Linux neither ends a request at
    // `timeoutInterval` reliably nor stops one that is cancelled mid-transfer, so its
    // completion is not awaited past the deadline (the transfer ends in the background).
    let timer = Task {
      try? await Task.sleep(for: timeout)
      if collector.finish(id, .timedOut) { task.cancel() }
    }
    let answer = await withCheckedContinuation { continuation in
      collector.start(task, continuation)
    }
    timer.cancel()
    return answer
  }
}

/// The session's delegate: collects each task's answer (bounded) and resumes its caller when
/// the task completes; refuses every redirect.
private final class AnswerCollector: NSObject, URLSessionDataDelegate, Sendable {
  private struct Pending {
    var continuation: CheckedContinuation<WebhookTransportAnswer, Never>
    var body: [UInt8] = []
  }

  private let maxBody: Int
  private let pending = Mutex<[Int: Pending]>([:])

  init(maxBody: Int) { self.maxBody = maxBody }

  func start(
    _ task: URLSessionDataTask, _ continuation: CheckedContinuation<WebhookTransportAnswer, Never>
  ) {
    pending.withLock { $0[task.taskIdentifier] = Pending(continuation: continuation) }
    task.resume()
  }

  /// Resumes the caller of task `id` with `answer` unless it was resumed already; true if
  /// this call did.
  func finish(_ id: Int, _ answer: WebhookTransportAnswer) -> Bool {
    guard let entry = pending.withLock({ $0.removeValue(forKey: id) }) else { return false }
    entry.continuation.resume(returning: answer)
    return true
  }

  func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
    let full = pending.withLock { pending -> [UInt8]? in
      guard var entry = pending[dataTask.taskIdentifier] else { return nil }
      entry.body.append(contentsOf: data.prefix(maxBody - entry.body.count))
      pending[dataTask.taskIdentifier] = entry
      return entry.body.count >= maxBody ? entry.body : nil
    }
    // Enough of the answer to show: the caller has its answer now, and the rest is dropped
    // as it arrives.
    if let full, let response = dataTask.response as? HTTPURLResponse {
      let answer = WebhookTransportAnswer.answered(
        status: response.statusCode, body: full, retryAfter: Self.retryAfter(response))
      if finish(dataTask.taskIdentifier, answer) {
        dataTask.cancel()
      }
    }
  }

  func urlSession(
    _ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?
  ) {
    guard let body = pending.withLock({ $0[task.taskIdentifier]?.body }) else { return }
    let response = task.response as? HTTPURLResponse
    let answer: WebhookTransportAnswer
    if let response, error == nil {
      answer = .answered(
        status: response.statusCode, body: body, retryAfter: Self.retryAfter(response))
    } else if let urlError = error as? URLError, urlError.code == .timedOut {
      answer = .timedOut
    } else if let error {
      answer = .connectionFailed(String(describing: error))
    } else {
      answer = .connectionFailed("no HTTP response")
    }
    _ = finish(task.taskIdentifier, answer)
  }

  /// The answer's `Retry-After`, bounded: the dispatcher reads it only on a 429 or 503.
  private static func retryAfter(_ response: HTTPURLResponse) -> String? {
    response.value(forHTTPHeaderField: "Retry-After").map { String($0.prefix(128)) }
  }

  func urlSession(
    _ session: URLSession, task: URLSessionTask,
    willPerformHTTPRedirection response: HTTPURLResponse, newRequest request: URLRequest,
    completionHandler: @escaping @Sendable (URLRequest?) -> Void
  ) {
    completionHandler(nil)
  }
}
