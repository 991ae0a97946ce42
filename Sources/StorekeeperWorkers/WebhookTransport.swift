import Foundation

/// How a delivery is sent: one POST, its answer or why there was none. A seam so the
/// dispatcher can be tested without sockets; production uses `URLSessionWebhookTransport`.
package protocol WebhookTransport: Sendable {
  func post(url: URL, body: [UInt8], headers: [(String, String)], timeout: Duration) async
    -> WebhookTransportAnswer
}

/// A receiver's answer, or the reason there was none.
package enum WebhookTransportAnswer: Sendable, Equatable {
  case answered(status: Int, body: [UInt8])
  case timedOut
  case connectionFailed(String)
}
