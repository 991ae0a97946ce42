import OutboundHTTP

/// Apple's `sendAttemptResult`: how one attempt to deliver a notification went, as the App
/// Store Server API's notification history reports it.
enum FakeSendAttemptResult: String, Sendable, Encodable {
  case success = "SUCCESS"
  case timedOut = "TIMED_OUT"
  case noResponse = "NO_RESPONSE"
  case socketIssue = "SOCKET_ISSUE"
  case invalidResponse = "INVALID_RESPONSE"
  case prematureClose = "PREMATURE_CLOSE"
  case unsuccessfulHTTPResponseCode = "UNSUCCESSFUL_HTTP_RESPONSE_CODE"
  case other = "OTHER"

  init(status: Int) {
    self = (200...206).contains(status) ? .success : .unsuccessfulHTTPResponseCode
  }

  init(_ error: any Error) {
    switch error {
    case OutboundHTTPError.deadlinePassed: self = .timedOut
    case OutboundHTTPError.notHTTP: self = .invalidResponse
    case OutboundHTTPError.failed(let cause as CurlError):
      if cause.couldNotConnect {
        self = .socketIssue
      } else if cause.gotNothing {
        self = .noResponse
      } else if cause.cutShort {
        self = .prematureClose
      } else if cause.unreadableAnswer {
        self = .invalidResponse
      } else {
        self = .other
      }
    default: self = .other
    }
  }
}
