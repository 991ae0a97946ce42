import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The server's own requests to others (Apple, Google, an identity provider's key set, a
/// webhook receiver), run by libcurl on `CurlLoop`'s thread rather than by URLSession (see
/// there why). No cache, no cookies, no redirects followed; the deadline covers the whole
/// exchange, connection included; a cancelled task stops its request; an answer's body is
/// read up to `maxBody` bytes and the transfer then ended, so a peer cannot make the process
/// hold more than that per request.
public final class OutboundHTTPSession: Sendable {
  private let maxBody: Int

  /// `maxBody` bounds every answer's body kept (16 MiB by default: Apple's and Google's
  /// answers are a few KiB).
  public init(maxBody: Int = 16 << 20) {
    self.maxBody = maxBody
  }

  /// The status and body of the answer to `request`, whatever the status. Throws an
  /// `OutboundHTTPError` when no HTTP answer came within `timeout`.
  public func send(_ request: URLRequest, timeout: Duration) async throws -> (
    status: Int, body: [UInt8]
  ) {
    let answer = try await exchange(request, timeout: timeout)
    return (answer.status, answer.body)
  }

  /// The whole answer to `request`, its header fields included (a `Retry-After` to keep).
  /// Throws an `OutboundHTTPError` when no HTTP answer came within `timeout`, and
  /// `CancellationError` when the task is cancelled first.
  public func exchange(_ request: URLRequest, timeout: Duration) async throws -> OutboundHTTPAnswer
  {
    guard let url = request.url?.absoluteString else {
      throw OutboundHTTPError.failed(URLError(.badURL))
    }
    let outbound = OutboundRequest(
      url: url, method: request.httpMethod ?? "GET",
      headers: (request.allHTTPHeaderFields ?? [:]).sorted { $0.key < $1.key }.map { ($0, $1) },
      body: request.httpBody.map { [UInt8]($0) }, timeout: timeout)
    return try await exchange(outbound)
  }

  /// One POST of `body` (a webhook's), with its headers in the order given.
  public func post(url: URL, body: [UInt8], headers: [(String, String)], timeout: Duration)
    async throws -> OutboundHTTPAnswer
  {
    try await exchange(
      OutboundRequest(
        url: url.absoluteString, method: "POST", headers: headers, body: body, timeout: timeout))
  }

  private func exchange(_ request: OutboundRequest) async throws -> OutboundHTTPAnswer {
    let transfer: CurlTransfer
    do {
      transfer = try CurlTransfer(request, maxBody: maxBody)
    } catch {
      throw OutboundHTTPError.failed(error)
    }
    let loop = CurlLoop.shared
    return try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation { continuation in
        transfer.wait(continuation)
        if Task.isCancelled {
          transfer.resume(.failure(CancellationError()))
        } else {
          loop.add(transfer)
        }
      }
    } onCancel: {
      loop.cancel(transfer)
    }
  }
}
