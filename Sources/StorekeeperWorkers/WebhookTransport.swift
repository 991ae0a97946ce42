import Foundation

/// How a delivery is sent: one POST, its answer or why there was none. A seam so the
/// dispatcher can be tested without sockets; production uses `OutboundWebhookTransport`.
package protocol WebhookTransport: Sendable {
  func post(url: URL, body: [UInt8], headers: [(String, String)], timeout: Duration) async
    -> WebhookTransportAnswer
}

/// A receiver's answer (with its `Retry-After`, which schedules the next attempt), or the
/// reason there was none.
package enum WebhookTransportAnswer: Sendable, Equatable {
  case answered(status: Int, body: [UInt8], retryAfter: String? = nil)
  case timedOut
  case connectionFailed(String)
}
