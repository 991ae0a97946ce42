import Foundation

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

  /// PUTs `body` (JSON) with `headers` (Send Consumption Information); same contract as `post`.
  func put(url: URL, body: [UInt8], headers: [String: String], timeout: Duration) async throws
    -> (status: Int, body: [UInt8])
}

extension ReceiptTransport {
  /// Transports that only ever stood in for verifyReceipt cannot GET.
  public func get(url: URL, headers: [String: String], timeout: Duration) async throws
    -> (status: Int, body: [UInt8])
  {
    throw ReceiptTransportError.connectionFailed("this transport does not GET")
  }

  /// Nor PUT.
  public func put(url: URL, body: [UInt8], headers: [String: String], timeout: Duration)
    async throws -> (status: Int, body: [UInt8])
  {
    throw ReceiptTransportError.connectionFailed("this transport does not PUT")
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
