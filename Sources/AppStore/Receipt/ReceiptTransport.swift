import Foundation

/// How `ReceiptVerifier` reaches Apple's verifyReceipt: a seam so tests can stand in for Apple.
public protocol ReceiptTransport: Sendable {
  /// POSTs `body` (JSON) and returns the HTTP status and body. Throws on timeouts and
  /// connection failures (`ReceiptTransportError` when it can tell which).
  func post(url: URL, body: [UInt8], timeout: Duration) async throws -> (status: Int, body: [UInt8])
}

public enum ReceiptTransportError: Error, Sendable, Equatable {
  case timedOut
  case connectionFailed(String)
}
