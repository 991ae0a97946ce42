import Foundation
import OutboundHTTP

/// Webhooks through the process's outbound client (libcurl, not URLSession: a receiver that
/// refuses connections must not be able to crash the server). Redirects are not followed: a
/// 3xx is an answer that is not 2xx, so a receiver cannot bounce signed events to another
/// address. An answer's body is read up to `maxBody` bytes and the request then ended, so a
/// receiver cannot make an instance hold more than that per attempt.
package final class OutboundWebhookTransport: WebhookTransport {
  private let session: OutboundHTTPSession

  package init(maxBody: Int = 4096) {
    session = OutboundHTTPSession(maxBody: maxBody)
  }

  package func post(url: URL, body: [UInt8], headers: [(String, String)], timeout: Duration) async
    -> WebhookTransportAnswer
  {
    do {
      let answer = try await session.post(url: url, body: body, headers: headers, timeout: timeout)
      // Bounded: the dispatcher reads it only on a 429 or 503.
      let retryAfter = answer.headers["retry-after"].map { String($0.prefix(128)) }
      return .answered(status: answer.status, body: answer.body, retryAfter: retryAfter)
    } catch OutboundHTTPError.deadlinePassed {
      return .timedOut
    } catch OutboundHTTPError.failed(let cause) {
      return .connectionFailed(String(describing: cause))
    } catch OutboundHTTPError.notHTTP {
      return .connectionFailed("no HTTP response")
    } catch {
      return .connectionFailed(String(describing: error))
    }
  }
}
