import Foundation
import OutboundHTTP

/// How the module reaches Apple over HTTPS (verifyReceipt, the App Store Server API): a seam
/// so tests can stand in for Apple.
public protocol ReceiptTransport: Sendable {
  /// POSTs `body` (JSON) with extra `headers` and returns the HTTP status and body. Throws on
  /// timeouts and connection failures (`ReceiptTransportError` when it can tell which).
  func post(url: URL, body: [UInt8], headers: [String: String], timeout: Duration) async throws
    -> (status: Int, body: [UInt8])

  /// GETs `url` with `headers` (the App Store Server API's lookups); same contract as `post`.
  func get(url: URL, headers: [String: String], timeout: Duration) async throws
    -> (status: Int, body: [UInt8])

  /// Any method (the App Store Server API's GET, POST and PUT) with the answer's header fields,
  /// so a 429's `Retry-After` reaches the caller; same contract as `post` otherwise.
  func exchange(
    method: String, url: URL, body: [UInt8]?, headers: [String: String], timeout: Duration
  ) async throws -> OutboundHTTPAnswer
}

extension ReceiptTransport {
  /// Transports that only ever stood in for verifyReceipt cannot GET.
  public func get(url: URL, headers: [String: String], timeout: Duration) async throws
    -> (status: Int, body: [UInt8])
  {
    throw ReceiptTransportError.connectionFailed("this transport does not GET")
  }

  /// Transports that stand in for Apple without header fields answer GET and POST through
  /// their own methods, and refuse other methods.
  public func exchange(
    method: String, url: URL, body: [UInt8]?, headers: [String: String], timeout: Duration
  ) async throws -> OutboundHTTPAnswer {
    switch method {
    case "GET":
      let answer = try await get(url: url, headers: headers, timeout: timeout)
      return OutboundHTTPAnswer(status: answer.status, body: answer.body)
    case "POST":
      let answer = try await post(url: url, body: body ?? [], headers: headers, timeout: timeout)
      return OutboundHTTPAnswer(status: answer.status, body: answer.body)
    default:
      throw ReceiptTransportError.connectionFailed("this transport does not \(method)")
    }
  }

  public func post(url: URL, body: [UInt8], timeout: Duration) async throws -> (
    status: Int, body: [UInt8]
  ) {
    try await post(url: url, body: body, headers: [:], timeout: timeout)
  }
}

public enum ReceiptTransportError: Error, Sendable, Equatable {
  case timedOut
  case connectionFailed(String)
}
